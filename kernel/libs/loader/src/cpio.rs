//! # The ramdisk: a cpio "newc" archive
//!
//! The boot loader copies one file, the *ramdisk*, into memory next to the kernel and tells
//! the kernel where it is (`boot_info.ramdisk_addr`, `ramdisk_len`). Tally's ramdisk is an
//! archive in the cpio "newc" format — the format Linux unpacks its initramfs from, so the
//! host's `cpio -itv < target/tally/ramdisk-debug.cpio` lists it, and `cpio -o -H newc`
//! can make one.
//!
//! An archive is a sequence of entries, each starting at a multiple of 4 bytes:
//!
//! ```text
//!  offset  size  field         (all numbers: 8 ASCII hex digits, no 0x)
//!       0     6  magic         "070701" (or "070702": same, plus a checksum of the data)
//!       6     8  ino           inode number
//!      14     8  mode          file type and permissions, as st_mode (0o100755 = file rwxr-xr-x)
//!      22     8  uid
//!      30     8  gid
//!      38     8  nlink
//!      46     8  mtime         seconds since the epoch
//!      54     8  filesize      bytes of data
//!      62    32  devmajor, devminor, rdevmajor, rdevminor
//!      94     8  namesize      bytes of the name, counting its NUL
//!     102     8  check         070702: the sum of the data bytes (mod 2^32); otherwise 0
//!     110        name, NUL-terminated, then zero padding to a multiple of 4
//!                data, then zero padding to a multiple of 4
//! ```
//!
//! The entry named `TRAILER!!!` ends the archive; anything after it is ignored (archives are
//! often padded to a block size). Names are paths without a leading `/` (`bin/hello`).
//!
//! Reading never copies: [`Archive`] borrows the ramdisk's bytes and every [`Entry`] hands
//! out sub-slices of them. Each length and offset is checked before it is used, so a corrupt
//! archive yields an [`ExecError`], never an out-of-bounds access. [`Builder`] writes the
//! format (the host's `cargo xtask` packs the ramdisk with it).

use alloc::vec::Vec;

use crate::ExecError;

/// Size of a newc header, before the name.
pub const HEADER_LEN: usize = 110;
/// Magic of a plain newc entry.
pub const MAGIC: &[u8; 6] = b"070701";
/// Magic of a newc entry whose `check` field holds the sum of its data bytes.
pub const MAGIC_CRC: &[u8; 6] = b"070702";
/// Name of the entry that ends the archive.
pub const TRAILER: &str = "TRAILER!!!";

/// File type bits of `mode` (as in `st_mode`).
pub const S_IFMT: u32 = 0o170_000;
/// Regular file.
pub const S_IFREG: u32 = 0o100_000;
/// Directory.
pub const S_IFDIR: u32 = 0o040_000;

/// A ramdisk archive in memory (borrowed, never copied).
#[derive(Clone, Copy, Debug)]
pub struct Archive<'a> {
    data: &'a [u8],
}

/// One entry of the archive: its header fields and its data, borrowed from the archive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry<'a> {
    /// The path as stored (e.g. `bin/hello`); see [`normalize`] for how lookups compare it.
    pub name: &'a str,
    /// The file's bytes (empty for directories).
    pub data: &'a [u8],
    /// Type and permission bits, as `st_mode`.
    pub mode: u32,
    pub ino: u32,
    pub uid: u32,
    pub gid: u32,
    pub nlink: u32,
    pub mtime: u32,
    /// Byte offset of the entry's header in the archive (for error messages and tools).
    pub offset: usize,
}

impl Entry<'_> {
    /// A regular file?
    pub fn is_file(&self) -> bool {
        self.mode & S_IFMT == S_IFREG
    }

    /// A directory?
    pub fn is_dir(&self) -> bool {
        self.mode & S_IFMT == S_IFDIR
    }
}

impl<'a> Archive<'a> {
    /// Wraps the ramdisk's bytes. Nothing is checked yet: [`Archive::entries`] checks each
    /// entry as it reaches it, and [`Archive::validate`] walks the whole archive once.
    pub const fn new(data: &'a [u8]) -> Self {
        Archive { data }
    }

    /// The archive's bytes.
    pub const fn bytes(&self) -> &'a [u8] {
        self.data
    }

    /// The entries in archive order, up to (not including) the trailer. After an error the
    /// iterator yields that error once and then ends.
    pub fn entries(&self) -> Entries<'a> {
        Entries { data: self.data, pos: 0, done: false }
    }

    /// Walks the whole archive; returns the number of entries if every one is well formed
    /// and the trailer is there.
    pub fn validate(&self) -> Result<usize, ExecError> {
        let mut n = 0;
        for e in self.entries() {
            e?;
            n += 1;
        }
        Ok(n)
    }

    /// The regular file at `path` (`/bin/hello`, `bin/hello` and `./bin/hello` are the same
    /// path). [`ExecError::NotFound`] if there is none or it is not a regular file; an
    /// archive error if the archive is corrupt before the file is reached.
    pub fn find(&self, path: &str) -> Result<Entry<'a>, ExecError> {
        let want = normalize(path);
        if want.is_empty() {
            return Err(ExecError::NotFound);
        }
        for e in self.entries() {
            let e = e?;
            if normalize(e.name) == want {
                return if e.is_file() { Ok(e) } else { Err(ExecError::NotFound) };
            }
        }
        Err(ExecError::NotFound)
    }
}

/// What a path names in the archive, for `stat`, `open` and directory listings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node<'a> {
    /// A regular file (the entry).
    File(Entry<'a>),
    /// A directory: an entry of that type, a prefix of some entry's path (archives need not
    /// list the directories of their files), or the root (the empty path).
    Dir,
}

impl<'a> Archive<'a> {
    /// What `path` names (normalized as [`normalize`] does), if anything. An archive error
    /// before the answer is found is returned as such.
    pub fn lookup(&self, path: &str) -> Result<Option<Node<'a>>, ExecError> {
        let want = normalize(path).trim_end_matches('/');
        if want.is_empty() {
            return Ok(Some(Node::Dir));
        }
        for e in self.entries() {
            let e = e?;
            let name = normalize(e.name);
            if name == want {
                return Ok(if e.is_file() { Some(Node::File(e)) } else { e.is_dir().then_some(Node::Dir) });
            }
            if name.strip_prefix(want).is_some_and(|rest| rest.starts_with('/')) {
                return Ok(Some(Node::Dir));
            }
        }
        Ok(None)
    }

    /// The names directly inside directory `dir` (normalized; empty: the root), each once,
    /// with whether it is a directory, sorted by name. Files and directories only.
    pub fn list(&self, dir: &str) -> Result<Vec<(&'a str, bool)>, ExecError> {
        let dir = normalize(dir).trim_end_matches('/');
        let mut out: Vec<(&'a str, bool)> = Vec::new();
        for e in self.entries() {
            let e = e?;
            let name = normalize(e.name);
            let rest = if dir.is_empty() {
                name
            } else {
                match name.strip_prefix(dir).and_then(|r| r.strip_prefix('/')) {
                    Some(r) => r,
                    None => continue,
                }
            };
            let (first, deeper) = match rest.split_once('/') {
                Some((first, _)) => (first, true),
                None => (rest, false),
            };
            if first.is_empty() || !(deeper || e.is_file() || e.is_dir()) {
                continue;
            }
            let is_dir = deeper || e.is_dir();
            if !out.iter().any(|&(n, _)| n == first) {
                out.push((first, is_dir));
            }
        }
        out.sort_unstable();
        Ok(out)
    }
}

/// A path as the archive compares it: without leading `/` and `./` (so `/bin/hello`,
/// `./bin/hello` and `bin/hello` all become `bin/hello`). Nothing else is interpreted: there
/// are no `..` or symbolic links in a ramdisk lookup.
pub fn normalize(mut path: &str) -> &str {
    loop {
        if let Some(rest) = path.strip_prefix('/') {
            path = rest;
        } else if let Some(rest) = path.strip_prefix("./") {
            path = rest;
        } else if path == "." {
            return "";
        } else {
            return path;
        }
    }
}

/// Iterator over an archive's entries; see [`Archive::entries`].
#[derive(Clone, Debug)]
pub struct Entries<'a> {
    data: &'a [u8],
    pos: usize,
    done: bool,
}

impl<'a> Iterator for Entries<'a> {
    type Item = Result<Entry<'a>, ExecError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match parse_entry(self.data, self.pos) {
            Ok(Some((entry, next))) => {
                self.pos = next;
                Some(Ok(entry))
            }
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl core::iter::FusedIterator for Entries<'_> {}

/// Parses the entry whose header starts at `at`: `Ok(Some((entry, offset of the next)))`,
/// or `Ok(None)` at the trailer.
fn parse_entry(data: &[u8], at: usize) -> Result<Option<(Entry<'_>, usize)>, ExecError> {
    if at == data.len() {
        return Err(ExecError::ArchiveNoTrailer);
    }
    let header = at
        .checked_add(HEADER_LEN)
        .and_then(|end| data.get(at..end))
        .ok_or(ExecError::ArchiveTruncated { offset: at })?;
    let crc = match &header[..6] {
        m if m == MAGIC => false,
        m if m == MAGIC_CRC => true,
        _ => return Err(ExecError::ArchiveBadMagic { offset: at }),
    };
    let field = |i: usize| hex8(&header[6 + 8 * i..6 + 8 * (i + 1)]).ok_or(ExecError::ArchiveBadField { offset: at });
    let (ino, mode, uid, gid, nlink, mtime, filesize) =
        (field(0)?, field(1)?, field(2)?, field(3)?, field(4)?, field(5)?, field(6)?);
    for i in 7..11 {
        field(i)?; // device numbers: checked for form, otherwise unused
    }
    let namesize = field(11)? as usize;
    let check = field(12)?;

    let name_start = at + HEADER_LEN;
    let name_end = name_start.checked_add(namesize).ok_or(ExecError::ArchiveTruncated { offset: at })?;
    let name_bytes = data.get(name_start..name_end).ok_or(ExecError::ArchiveTruncated { offset: at })?;
    // The name must be non-empty, end with its NUL, and hold no other NUL.
    let name = match name_bytes.split_last() {
        Some((0, name)) if !name.is_empty() && !name.contains(&0) => {
            core::str::from_utf8(name).map_err(|_| ExecError::ArchiveBadName { offset: at })?
        }
        _ => return Err(ExecError::ArchiveBadName { offset: at }),
    };
    if name == TRAILER {
        return Ok(None);
    }

    let data_start = align4(name_end).ok_or(ExecError::ArchiveTruncated { offset: at })?;
    let data_end = data_start.checked_add(filesize as usize).ok_or(ExecError::ArchiveTruncated { offset: at })?;
    let file = data.get(data_start..data_end).ok_or(ExecError::ArchiveTruncated { offset: at })?;
    if crc && checksum(file) != check {
        return Err(ExecError::ArchiveBadChecksum { offset: at });
    }
    // The padding after the data may be cut off only if nothing follows; the next parse
    // then reports the truncation, so clamp to the end here.
    let next = align4(data_end).ok_or(ExecError::ArchiveTruncated { offset: at })?.min(data.len());
    let entry = Entry { name, data: file, mode, ino, uid, gid, nlink, mtime, offset: at };
    Ok(Some((entry, next)))
}

/// The `check` value of a `070702` entry: the sum of its data bytes, modulo 2^32.
pub fn checksum(data: &[u8]) -> u32 {
    data.iter().fold(0u32, |s, &b| s.wrapping_add(u32::from(b)))
}

fn align4(x: usize) -> Option<usize> {
    Some(x.checked_add(3)? & !3)
}

/// Eight ASCII hex digits (either case) as a number.
fn hex8(digits: &[u8]) -> Option<u32> {
    if digits.len() != 8 {
        return None;
    }
    digits.iter().try_fold(0u32, |acc, &c| {
        let d = (c as char).to_digit(16)?;
        Some((acc << 4) | d)
    })
}

/// Writes a newc archive (plain `070701` entries), e.g. the ramdisk on the host.
///
/// ```
/// let mut b = tally_loader::cpio::Builder::new();
/// b.dir("bin").unwrap();
/// b.file("bin/hello", b"\x7fELF...", 0o755).unwrap();
/// let bytes = b.finish();
/// let a = tally_loader::cpio::Archive::new(&bytes);
/// assert_eq!(a.find("/bin/hello").unwrap().data, b"\x7fELF...");
/// ```
#[derive(Clone, Debug, Default)]
pub struct Builder {
    out: Vec<u8>,
    next_ino: u32,
}

impl Builder {
    pub fn new() -> Self {
        Builder { out: Vec::new(), next_ino: 1 }
    }

    /// Adds a regular file with permission bits `perm` (e.g. `0o755`).
    pub fn file(&mut self, name: &str, data: &[u8], perm: u32) -> Result<(), ExecError> {
        self.entry(name, data, S_IFREG | (perm & 0o7777), 1)
    }

    /// Adds a directory (mode `0o755`).
    pub fn dir(&mut self, name: &str) -> Result<(), ExecError> {
        self.entry(name, &[], S_IFDIR | 0o755, 2)
    }

    /// Appends the trailer and returns the archive.
    pub fn finish(mut self) -> Vec<u8> {
        // The trailer is a valid name and has no data: this cannot fail.
        let _ = self.raw(TRAILER, &[], 0, 1, 0);
        self.out
    }

    fn entry(&mut self, name: &str, data: &[u8], mode: u32, nlink: u32) -> Result<(), ExecError> {
        let offset = self.out.len();
        if name.is_empty() || name.contains('\0') || normalize(name) == TRAILER {
            return Err(ExecError::ArchiveBadName { offset });
        }
        let ino = self.next_ino;
        self.next_ino = self.next_ino.wrapping_add(1);
        self.raw(name, data, mode, nlink, ino)
    }

    fn raw(&mut self, name: &str, data: &[u8], mode: u32, nlink: u32, ino: u32) -> Result<(), ExecError> {
        let offset = self.out.len();
        let filesize = u32::try_from(data.len()).map_err(|_| ExecError::ArchiveTruncated { offset })?;
        let namesize = u32::try_from(name.len() + 1).map_err(|_| ExecError::ArchiveBadName { offset })?;
        self.out.extend_from_slice(MAGIC);
        for v in [ino, mode, 0, 0, nlink, 0, filesize, 0, 0, 0, 0, namesize, 0] {
            push_hex8(&mut self.out, v);
        }
        self.out.extend_from_slice(name.as_bytes());
        self.out.push(0);
        self.pad();
        self.out.extend_from_slice(data);
        self.pad();
        Ok(())
    }

    fn pad(&mut self) {
        while !self.out.len().is_multiple_of(4) {
            self.out.push(0);
        }
    }
}

fn push_hex8(out: &mut Vec<u8>, v: u32) {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    for shift in (0..8).rev() {
        out.push(DIGITS[((v >> (shift * 4)) & 0xf) as usize]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let mut b = Builder::new();
        b.dir("bin").unwrap();
        b.file("bin/hello", b"hello world", 0o755).unwrap();
        b.file("bin/empty", b"", 0o644).unwrap();
        b.file("etc/motd", b"abc", 0o644).unwrap();
        b.finish()
    }

    #[test]
    fn lookup_and_list_see_implicit_directories() {
        let bytes = sample();
        let a = Archive::new(&bytes);
        assert!(matches!(a.lookup("/bin/hello"), Ok(Some(Node::File(e))) if e.data == b"hello world"));
        assert_eq!(a.lookup("/bin"), Ok(Some(Node::Dir)), "an entry of its own");
        assert_eq!(a.lookup("/etc/"), Ok(Some(Node::Dir)), "only a prefix of etc/motd");
        assert_eq!(a.lookup("/"), Ok(Some(Node::Dir)), "the root");
        assert_eq!(a.lookup("/bi"), Ok(None), "a prefix of a name is not a directory");
        assert_eq!(a.lookup("/bin/hello/x"), Ok(None));
        assert_eq!(a.list("/bin"), Ok(vec![("empty", false), ("hello", false)]));
        assert_eq!(a.list("/"), Ok(vec![("bin", true), ("etc", true)]), "each directory once");
        assert_eq!(a.list("/nothing"), Ok(vec![]));
    }

    #[test]
    fn header_layout_is_newc() {
        let a = sample();
        assert_eq!(&a[..6], b"070701");
        // "bin\0" after the 110-byte header: namesize 4, then padding to 116.
        assert_eq!(&a[94..102], b"00000004");
        assert_eq!(&a[110..114], b"bin\0");
        assert_eq!(&a[14..22], b"000041ED"); // 0o40755
        assert_eq!(a.len() % 4, 0);
        // The second entry starts 4-aligned, right after the first (no data).
        assert_eq!(&a[116..122], b"070701");
    }

    #[test]
    fn iterate_and_find() {
        let bytes = sample();
        let a = Archive::new(&bytes);
        let names: Vec<_> = a.entries().map(|e| e.unwrap().name).collect();
        assert_eq!(names, ["bin", "bin/hello", "bin/empty", "etc/motd"]);
        assert_eq!(a.validate(), Ok(4));
        let h = a.find("/bin/hello").unwrap();
        assert_eq!(h.data, b"hello world");
        assert_eq!(h.mode, 0o100_755);
        assert!(h.is_file() && !h.is_dir());
        assert_eq!(a.find("bin/hello").unwrap(), h);
        assert_eq!(a.find(".//./bin/hello").unwrap(), h);
        assert_eq!(a.find("bin/empty").unwrap().data, b"");
        assert_eq!(a.find("bin"), Err(ExecError::NotFound), "a directory is not a file");
        assert_eq!(a.find("bin/hell"), Err(ExecError::NotFound));
        assert_eq!(a.find("/"), Err(ExecError::NotFound));
        assert_eq!(a.find(""), Err(ExecError::NotFound));
        assert_eq!(a.find("TRAILER!!!"), Err(ExecError::NotFound));
    }

    #[test]
    fn the_same_name_in_two_directories() {
        // The ramdisk holds /bin/threads (a tool) and /test/threads (a self-test's fixture).
        let mut b = Builder::new();
        b.dir("bin").unwrap();
        b.dir("test").unwrap();
        b.file("bin/threads", b"tool", 0o755).unwrap();
        b.file("test/threads", b"fixture", 0o755).unwrap();
        let bytes = b.finish();
        let a = Archive::new(&bytes);
        assert_eq!(a.validate(), Ok(4));
        assert_eq!(a.find("/bin/threads").unwrap().data, b"tool");
        assert_eq!(a.find("/test/threads").unwrap().data, b"fixture");
        assert_eq!(a.find("test/threads").unwrap().data, b"fixture");
        assert_eq!(a.find("/test"), Err(ExecError::NotFound), "a directory is not a file");
        assert_eq!(a.find("/threads"), Err(ExecError::NotFound));
    }

    #[test]
    fn normalize_strips_only_leading_root_and_dot() {
        assert_eq!(normalize("/bin/x"), "bin/x");
        assert_eq!(normalize("./bin/x"), "bin/x");
        assert_eq!(normalize("//./bin/x"), "bin/x");
        assert_eq!(normalize("bin/./x"), "bin/./x");
        assert_eq!(normalize("."), "");
        assert_eq!(normalize("/"), "");
    }

    #[test]
    fn anything_after_the_trailer_is_ignored() {
        let mut bytes = sample();
        bytes.extend_from_slice(&[0xAA; 300]);
        assert_eq!(Archive::new(&bytes).validate(), Ok(4));
    }

    #[test]
    fn corruption_is_an_error() {
        let good = sample();
        assert_eq!(Archive::new(&[]).validate(), Err(ExecError::ArchiveNoTrailer));
        assert_eq!(Archive::new(&good[..50]).validate(), Err(ExecError::ArchiveTruncated { offset: 0 }));
        // Cut just before the trailer.
        let trailer_at = good.len() - 124;
        assert_eq!(&good[trailer_at..trailer_at + 6], b"070701");
        assert_eq!(Archive::new(&good[..trailer_at]).validate(), Err(ExecError::ArchiveNoTrailer));
        let mut bad = good.clone();
        bad[0] = b'1';
        assert_eq!(Archive::new(&bad).validate(), Err(ExecError::ArchiveBadMagic { offset: 0 }));
        let mut bad = good.clone();
        bad[20] = b'g';
        assert_eq!(Archive::new(&bad).validate(), Err(ExecError::ArchiveBadField { offset: 0 }));
        let mut bad = good.clone();
        bad[113] = b'x'; // "bin\0" loses its NUL
        assert_eq!(Archive::new(&bad).validate(), Err(ExecError::ArchiveBadName { offset: 0 }));
        // A huge file size runs off the end.
        let mut bad = good.clone();
        bad[54..62].copy_from_slice(b"FFFFFFFF");
        assert_eq!(Archive::new(&bad).validate(), Err(ExecError::ArchiveTruncated { offset: 0 }));
        // A lookup of a file after the damage reports the damage, not "not found".
        assert_eq!(Archive::new(&bad).find("etc/motd"), Err(ExecError::ArchiveTruncated { offset: 0 }));
        assert_eq!(ExecError::ArchiveTruncated { offset: 0 }.errno(), tally_uapi::errno::EIO);
    }

    #[test]
    fn crc_entries_are_checked() {
        let mut b = Builder::new();
        b.file("f", b"\x01\x02\xff", 0o644).unwrap();
        let mut bytes = b.finish();
        bytes[..6].copy_from_slice(MAGIC_CRC);
        // check = 0 but the data sums to 0x102.
        assert_eq!(Archive::new(&bytes).validate(), Err(ExecError::ArchiveBadChecksum { offset: 0 }));
        bytes[102..110].copy_from_slice(b"00000102");
        assert_eq!(Archive::new(&bytes).find("f").unwrap().data, b"\x01\x02\xff");
    }

    #[test]
    fn lower_case_hex_is_accepted() {
        let mut bytes = sample();
        bytes[14..22].copy_from_slice(b"000041ed");
        assert_eq!(Archive::new(&bytes).entries().next().unwrap().unwrap().mode, 0o40755);
    }

    #[test]
    fn builder_refuses_bad_names() {
        let mut b = Builder::new();
        assert!(b.file("", b"", 0).is_err());
        assert!(b.file("a\0b", b"", 0).is_err());
        assert!(b.file("TRAILER!!!", b"", 0).is_err());
        assert!(b.file("/TRAILER!!!", b"", 0).is_err());
    }
}
