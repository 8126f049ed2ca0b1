//! Files on `/var`: open flags, seek origins, `struct stat` and `struct linux_dirent64`.
//!
//! Tally's one writable file system is the FAT16 accounting disk mounted at `/var` (see
//! `docs/files.md`). The calls that reach it (`open`, `read`, `write`, `lseek`, `close`,
//! `stat`, `fstat`, `mkdir`, `unlink`, `getdents64`, `fsync`) use Linux's numbers, flags,
//! errno values and structure layouts on x86_64, so the user tools are written as they would
//! be on Linux. FAT has no owners, permissions or inode numbers: [`Stat`] reports uid 0,
//! mode 0644 (0755 for a directory), one link, and an inode number made from the entry's
//! first cluster; names are 8.3 (a component that is not: `ENAMETOOLONG`) and compare
//! without regard to case, as FAT does.

/// `open` access modes (the low two bits of `flags`).
pub const O_RDONLY: u32 = 0;
pub const O_WRONLY: u32 = 1;
pub const O_RDWR: u32 = 2;
pub const O_ACCMODE: u32 = 3;
/// Create the file if it does not exist.
pub const O_CREAT: u32 = 0o100;
/// With `O_CREAT`: fail with `EEXIST` if it exists.
pub const O_EXCL: u32 = 0o200;
/// Truncate a regular file opened for writing to length 0.
pub const O_TRUNC: u32 = 0o1000;
/// Every write goes to the end of the file, atomically with finding the end.
pub const O_APPEND: u32 = 0o2000;
/// Fail with `ENOTDIR` unless the path names a directory.
pub const O_DIRECTORY: u32 = 0o200000;
/// Non-blocking I/O (`fcntl(F_SETFL)`, `open`): a call that would sleep fails with `EAGAIN`.
pub const O_NONBLOCK: u32 = 0o4000;
/// Close-on-exec: the new descriptor is not inherited by the processes `spawn` starts
/// (`spawn` is fork + exec). Also `pipe2`'s, `dup3`'s and (as `SOCK_CLOEXEC`) `socket`'s flag.
pub const O_CLOEXEC: u32 = 0o2000000;

/// `fcntl` commands (Linux's numbers, asm-generic/fcntl.h). `F_DUPFD`/`F_DUPFD_CLOEXEC`:
/// the lowest free descriptor at or above `arg`; `F_GETFD`/`F_SETFD`: the descriptor's
/// flags ([`FD_CLOEXEC`]); `F_GETFL`: the open file's access mode and status flags.
pub const F_DUPFD: u32 = 0;
pub const F_GETFD: u32 = 1;
pub const F_SETFD: u32 = 2;
pub const F_GETFL: u32 = 3;
pub const F_SETFL: u32 = 4;
pub const F_DUPFD_CLOEXEC: u32 = 1030;
/// The descriptor flag of `F_GETFD`/`F_SETFD`: close on exec (here: not inherited by `spawn`).
pub const FD_CLOEXEC: u32 = 1;

/// `lseek` origins.
pub const SEEK_SET: u32 = 0;
pub const SEEK_CUR: u32 = 1;
pub const SEEK_END: u32 = 2;

/// `st_mode` file types.
pub const S_IFMT: u32 = 0o170000;
pub const S_IFSOCK: u32 = 0o140000;
pub const S_IFREG: u32 = 0o100000;
pub const S_IFDIR: u32 = 0o040000;
pub const S_IFCHR: u32 = 0o020000;
pub const S_IFIFO: u32 = 0o010000;

/// `d_type` of a directory entry.
pub const DT_UNKNOWN: u8 = 0;
pub const DT_DIR: u8 = 4;
pub const DT_REG: u8 = 8;

/// Where the accounting disk is mounted; every file path starts here.
pub const VAR_MOUNT: &str = "/var";
/// Longest path `open`, `stat`, `mkdir`, `unlink` and `acct` accept, NUL included
/// (Linux's `PATH_MAX`): a longer one is `ENAMETOOLONG`.
pub const PATH_MAX: usize = 4096;
/// Deepest directory nesting under `/var` the kernel walks (more: `ENAMETOOLONG`).
pub const MAX_DEPTH: usize = 8;

/// `struct stat` on x86_64 Linux (144 bytes): what `stat` and `fstat` fill in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stat {
    pub st_dev: u64,
    pub st_ino: u64,
    pub st_nlink: u64,
    pub st_mode: u32,
    pub st_uid: u32,
    pub st_gid: u32,
    pub st_rdev: u64,
    pub st_size: i64,
    pub st_blksize: i64,
    /// In 512-byte units, as on Linux.
    pub st_blocks: i64,
    pub st_atime: i64,
    pub st_atime_nsec: u64,
    pub st_mtime: i64,
    pub st_mtime_nsec: u64,
    pub st_ctime: i64,
    pub st_ctime_nsec: u64,
}

impl Stat {
    /// Bytes of `struct stat`.
    pub const SIZE: usize = 144;

    /// The little-endian image a C program reads into `struct stat` (padding zero).
    pub fn to_bytes(&self) -> [u8; Self::SIZE] {
        let mut b = [0u8; Self::SIZE];
        b[0..8].copy_from_slice(&self.st_dev.to_le_bytes());
        b[8..16].copy_from_slice(&self.st_ino.to_le_bytes());
        b[16..24].copy_from_slice(&self.st_nlink.to_le_bytes());
        b[24..28].copy_from_slice(&self.st_mode.to_le_bytes());
        b[28..32].copy_from_slice(&self.st_uid.to_le_bytes());
        b[32..36].copy_from_slice(&self.st_gid.to_le_bytes());
        b[40..48].copy_from_slice(&self.st_rdev.to_le_bytes());
        b[48..56].copy_from_slice(&self.st_size.to_le_bytes());
        b[56..64].copy_from_slice(&self.st_blksize.to_le_bytes());
        b[64..72].copy_from_slice(&self.st_blocks.to_le_bytes());
        b[72..80].copy_from_slice(&self.st_atime.to_le_bytes());
        b[80..88].copy_from_slice(&self.st_atime_nsec.to_le_bytes());
        b[88..96].copy_from_slice(&self.st_mtime.to_le_bytes());
        b[96..104].copy_from_slice(&self.st_mtime_nsec.to_le_bytes());
        b[104..112].copy_from_slice(&self.st_ctime.to_le_bytes());
        b[112..120].copy_from_slice(&self.st_ctime_nsec.to_le_bytes());
        b
    }

    /// The structure in a `struct stat` image.
    pub fn from_bytes(b: &[u8; Self::SIZE]) -> Stat {
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or([0; 8]));
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap_or([0; 4]));
        Stat {
            st_dev: u64_at(0),
            st_ino: u64_at(8),
            st_nlink: u64_at(16),
            st_mode: u32_at(24),
            st_uid: u32_at(28),
            st_gid: u32_at(32),
            st_rdev: u64_at(40),
            st_size: u64_at(48) as i64,
            st_blksize: u64_at(56) as i64,
            st_blocks: u64_at(64) as i64,
            st_atime: u64_at(72) as i64,
            st_atime_nsec: u64_at(80),
            st_mtime: u64_at(88) as i64,
            st_mtime_nsec: u64_at(96),
            st_ctime: u64_at(104) as i64,
            st_ctime_nsec: u64_at(112),
        }
    }

    /// Is this a directory?
    pub fn is_dir(&self) -> bool {
        self.st_mode & S_IFMT == S_IFDIR
    }
}

/// `struct linux_dirent64`, the records `getdents64` packs into the caller's buffer:
/// `d_ino` u64 at 0, `d_off` i64 at 8 (an opaque cookie: the position after this entry),
/// `d_reclen` u16 at 16 (the whole record, a multiple of 8), `d_type` u8 at 18, then the
/// NUL-terminated name at 19, padded with zeros to `d_reclen`.
pub mod dirent64 {
    /// Offset of the name in a record.
    pub const NAME_OFFSET: usize = 19;

    /// Bytes of the record for a name of `name_len` bytes (NUL and padding included).
    pub const fn reclen(name_len: usize) -> usize {
        (NAME_OFFSET + name_len + 1 + 7) & !7
    }

    /// Write one record for (`ino`, `off`, `d_type`, `name`) at the start of `out`; returns
    /// its length, or `None` if `out` is too short for it.
    pub fn encode(out: &mut [u8], ino: u64, off: i64, d_type: u8, name: &[u8]) -> Option<usize> {
        let len = reclen(name.len());
        let rec = out.get_mut(..len)?;
        rec.fill(0);
        rec[0..8].copy_from_slice(&ino.to_le_bytes());
        rec[8..16].copy_from_slice(&off.to_le_bytes());
        rec[16..18].copy_from_slice(&(len as u16).to_le_bytes());
        rec[18] = d_type;
        rec[NAME_OFFSET..NAME_OFFSET + name.len()].copy_from_slice(name);
        Some(len)
    }

    /// One record read back: (`d_ino`, `d_off`, `d_type`, name), and the record's length;
    /// `None` for a record that does not fit `buf` or is malformed.
    pub fn decode(buf: &[u8]) -> Option<((u64, i64, u8, &[u8]), usize)> {
        let head = buf.get(..NAME_OFFSET)?;
        let ino = u64::from_le_bytes(head[0..8].try_into().ok()?);
        let off = i64::from_le_bytes(head[8..16].try_into().ok()?);
        let len = usize::from(u16::from_le_bytes(head[16..18].try_into().ok()?));
        let rec = buf.get(..len).filter(|_| len > NAME_OFFSET)?;
        let name = &rec[NAME_OFFSET..];
        let end = name.iter().position(|&c| c == 0)?;
        Some(((ino, off, head[18], &name[..end]), len))
    }
}

/// Paths under `/var`: how the kernel splits one into FAT 8.3 components.
///
/// Pure logic, shared by the kernel's `fs` module and its host tests. A path is accepted
/// when it is `/var` or starts with `/var/`; empty components (`//`) and `.` are skipped,
/// `..` goes up one level (above `/var` itself is `PathError::NotUnderVar`). Each other
/// component must be an 8.3 name: 1–8 characters, optionally a dot and 1–3 more, from
/// letters, digits and `! # $ % & ' ( ) - @ ^ _ ` { } ~`. Letters are upper-cased, as FAT
/// stores them, so names compare without regard to case.
pub mod path {
    use super::{MAX_DEPTH, PATH_MAX};
    use crate::errno::{EINVAL, ENAMETOOLONG};

    /// One component, upper-cased: `NAME` or `NAME.EXT` (at most 12 bytes).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Component {
        bytes: [u8; 12],
        len: u8,
    }

    impl Component {
        /// The name as FAT shows it (`PACCT`, `A.TXT`).
        pub fn as_bytes(&self) -> &[u8] {
            &self.bytes[..self.len as usize]
        }

        /// The same as text (always ASCII).
        pub fn as_str(&self) -> &str {
            core::str::from_utf8(self.as_bytes()).unwrap_or("")
        }
    }

    /// Why a path was refused.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum PathError {
        /// Not `/var` or below it (a relative path, another directory, `..` above `/var`).
        NotUnderVar,
        /// A component longer than 8.3, too deep, or a path over `PATH_MAX`.
        TooLong,
        /// A byte FAT does not allow in a name, or a misplaced dot.
        Invalid,
    }

    impl PathError {
        /// The errno a system call returns for it (`NotUnderVar`: `EINVAL`; callers that
        /// want `ENOENT` or `EROFS` for paths elsewhere decide that themselves).
        pub fn errno(self) -> i32 {
            match self {
                PathError::NotUnderVar | PathError::Invalid => EINVAL,
                PathError::TooLong => ENAMETOOLONG,
            }
        }
    }

    /// A path below `/var`, split: the components from `/var` down (none: `/var` itself).
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct VarPath {
        parts: [Component; MAX_DEPTH],
        depth: usize,
    }

    impl VarPath {
        /// The components, outermost first.
        pub fn components(&self) -> &[Component] {
            &self.parts[..self.depth]
        }

        /// The last component (`None` for `/var`).
        pub fn last(&self) -> Option<&Component> {
            self.components().last()
        }

        /// Everything but the last component.
        pub fn parent(&self) -> &[Component] {
            &self.parts[..self.depth.saturating_sub(1)]
        }

        /// The canonical form, `/var/A/B.TXT`, into `out`; returns its length (0 if `out` is
        /// too short). Two paths naming the same file have the same canonical form.
        pub fn canonical(&self, out: &mut [u8]) -> usize {
            let mut n = 0;
            let mut put = |b: &[u8]| {
                if n + b.len() <= out.len() {
                    out[n..n + b.len()].copy_from_slice(b);
                }
                n += b.len();
            };
            put(b"/var");
            for c in self.components() {
                put(b"/");
                put(c.as_bytes());
            }
            if n > out.len() {
                0
            } else {
                n
            }
        }
    }

    /// Is `b` allowed in an 8.3 name (after upper-casing)?
    fn allowed(b: u8) -> bool {
        b.is_ascii_uppercase() || b.is_ascii_digit() || b"!#$%&'()-@^_`{}~".contains(&b)
    }

    /// Check and upper-case one component.
    pub fn component(name: &[u8]) -> Result<Component, PathError> {
        if name.len() > 12 {
            return Err(PathError::TooLong);
        }
        let mut c = Component { bytes: [0; 12], len: name.len() as u8 };
        let (mut base, mut ext, mut dot) = (0usize, 0usize, false);
        for (i, &b) in name.iter().enumerate() {
            let up = b.to_ascii_uppercase();
            if up == b'.' {
                if dot || base == 0 {
                    return Err(PathError::Invalid);
                }
                dot = true;
            } else if !allowed(up) {
                return Err(PathError::Invalid);
            } else if dot {
                ext += 1;
            } else {
                base += 1;
            }
            c.bytes[i] = up;
        }
        if base > 8 || ext > 3 {
            return Err(PathError::TooLong);
        }
        if base == 0 || (dot && ext == 0) {
            return Err(PathError::Invalid);
        }
        Ok(c)
    }

    /// Split `path` (no NUL) into its components below `/var`.
    pub fn parse(path: &[u8]) -> Result<VarPath, PathError> {
        if path.len() >= PATH_MAX {
            return Err(PathError::TooLong);
        }
        let rest = path.strip_prefix(b"/var").ok_or(PathError::NotUnderVar)?;
        if !rest.is_empty() && rest[0] != b'/' {
            return Err(PathError::NotUnderVar);
        }
        let empty = Component { bytes: [0; 12], len: 0 };
        let mut out = VarPath { parts: [empty; MAX_DEPTH], depth: 0 };
        for name in rest.split(|&b| b == b'/') {
            match name {
                b"" | b"." => {}
                b".." => {
                    if out.depth == 0 {
                        return Err(PathError::NotUnderVar);
                    }
                    out.depth -= 1;
                }
                _ => {
                    let c = component(name)?;
                    if out.depth == MAX_DEPTH {
                        return Err(PathError::TooLong);
                    }
                    out.parts[out.depth] = c;
                    out.depth += 1;
                }
            }
        }
        Ok(out)
    }

    /// Is `path` below `/var` at all (`/var` itself or `/var/...`)? Tells "not our file
    /// system" (`ENOENT`, `EROFS`) from a bad name under `/var`.
    pub fn is_under_var(path: &[u8]) -> bool {
        path.strip_prefix(b"/var").is_some_and(|rest| rest.is_empty() || rest[0] == b'/')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_round_trips_and_puts_fields_where_linux_does() {
        let s =
            Stat { st_ino: 7, st_mode: S_IFREG | 0o644, st_size: 4096, st_blocks: 8, st_mtime: 99, ..Stat::default() };
        let b = s.to_bytes();
        assert_eq!(&b[24..28], &(S_IFREG | 0o644).to_le_bytes());
        assert_eq!(&b[48..56], &4096i64.to_le_bytes());
        assert_eq!(&b[88..96], &99i64.to_le_bytes());
        assert_eq!(Stat::from_bytes(&b), s);
    }

    #[test]
    fn dirent_records_are_aligned_and_decode() {
        assert_eq!(dirent64::reclen(1), 24);
        assert_eq!(dirent64::reclen(4), 24);
        assert_eq!(dirent64::reclen(5), 32);
        let mut buf = [0xAAu8; 64];
        let n = dirent64::encode(&mut buf, 3, 2, DT_REG, b"PACCT").unwrap();
        assert_eq!(n, 32);
        let ((ino, off, t, name), len) = dirent64::decode(&buf).unwrap();
        assert_eq!((ino, off, t, name, len), (3, 2, DT_REG, &b"PACCT"[..], 32));
        assert!(dirent64::encode(&mut buf[..20], 1, 1, DT_REG, b"X").is_none());
    }

    #[test]
    fn paths_split_into_upper_cased_8_3_components() {
        let p = path::parse(b"/var/account/pacct").unwrap();
        let names: Vec<&str> = p.components().iter().map(|c| c.as_str()).collect();
        assert_eq!(names, ["ACCOUNT", "PACCT"]);
        assert_eq!(path::parse(b"/var").unwrap().components().len(), 0);
        assert_eq!(path::parse(b"/var/").unwrap().components().len(), 0);
        let p = path::parse(b"/var//a/./b.txt/../C.D").unwrap();
        let names: Vec<&str> = p.components().iter().map(|c| c.as_str()).collect();
        assert_eq!(names, ["A", "C.D"]);
        let mut buf = [0u8; 64];
        let n = p.canonical(&mut buf);
        assert_eq!(&buf[..n], b"/var/A/C.D");
        assert_eq!(p.last().unwrap().as_str(), "C.D");
        assert_eq!(p.parent().len(), 1);
    }

    #[test]
    fn paths_outside_var_and_bad_names_are_refused() {
        use path::PathError::*;
        assert_eq!(path::parse(b"/bin/x"), Err(NotUnderVar));
        assert_eq!(path::parse(b"/variable"), Err(NotUnderVar));
        assert_eq!(path::parse(b"var/x"), Err(NotUnderVar));
        assert_eq!(path::parse(b"/var/.."), Err(NotUnderVar));
        assert_eq!(path::parse(b"/var/a/../../etc"), Err(NotUnderVar));
        assert_eq!(path::parse(b"/var/abcdefghi"), Err(TooLong));
        assert_eq!(path::parse(b"/var/a.abcd"), Err(TooLong));
        assert_eq!(path::parse(b"/var/longnames.txt"), Err(TooLong));
        assert!(path::parse(b"/var/longname.txt").is_ok());
        assert_eq!(path::parse(b"/var/.hidden"), Err(Invalid));
        assert_eq!(path::parse(b"/var/a.b.c"), Err(Invalid));
        assert_eq!(path::parse(b"/var/a."), Err(Invalid));
        assert_eq!(path::parse(b"/var/a b"), Err(Invalid));
        assert_eq!(path::parse(b"/var/a*"), Err(Invalid));
        assert_eq!(path::parse(b"/var/\xff\x01"), Err(Invalid));
        assert_eq!(path::parse(b"/var/a/b/c/d/e/f/g/h"), Ok(path::parse(b"/var/a/b/c/d/e/f/g/h").unwrap()));
        assert_eq!(path::parse(b"/var/a/b/c/d/e/f/g/h/i"), Err(TooLong));
        assert_eq!(path::parse(&[b'/'; 5000]), Err(TooLong));
    }

    #[test]
    fn every_byte_is_either_refused_or_a_valid_name() {
        for b in 0..=255u8 {
            let name = [b'A', b];
            match path::component(&name) {
                Ok(c) => assert!(c.as_bytes().iter().all(|x| x.is_ascii_graphic())),
                Err(e) => assert!(e == path::PathError::Invalid || b == b'.'),
            }
        }
        assert_eq!(path::PathError::TooLong.errno(), crate::errno::ENAMETOOLONG);
        assert_eq!(path::PathError::Invalid.errno(), crate::errno::EINVAL);
    }
}
