//! # The initial user stack: how `main` finds `argc` and `argv`
//!
//! A new program starts with nothing but its stack, and the stack carries its arguments.
//! The layout is fixed by the System V x86_64 ABI (§3.4.1), which Linux follows, so a
//! student can compare Tally's with `gdb` on a Linux `/bin/true`. At the entry point `rsp`
//! is 16-byte aligned and points at `argc`:
//!
//! ```text
//!   stack_top ->  +---------------------------+  (high addresses)
//!                 | "HOME=/\0"                |  envp strings, then
//!                 | "world\0"  "hello\0"      |  argv strings (argv[0] lowest)
//!                 | "/bin/hello\0" "x86_64\0"  |  placed items: AT_EXECFN, AT_PLATFORM,
//!                 | 16 random bytes           |  AT_RANDOM (build_with)
//!                 +---------------------------+
//!                 | 0..15 bytes of padding    |  so that rsp ends up 16-byte aligned
//!                 +---------------------------+
//!                 | AT_NULL, 0                |  auxiliary vector: (type, value) pairs,
//!                 | AT_RANDOM, &bytes ...     |  ended by AT_NULL; the placed items'
//!                 | AT_PAGESZ, 4096           |  addresses come last
//!                 | 0                         |  envp[envc] = NULL
//!                 | envp[0] ...               |  pointers into the strings above
//!                 | 0                         |  argv[argc] = NULL
//!                 | argv[argc-1] ... argv[0]  |
//!         rsp ->  | argc                      |  (low addresses)
//!                 +---------------------------+
//! ```
//!
//! So `argv` is `rsp + 8`, `envp` is `argv + 8 * (argc + 1)`, and the auxiliary vector starts
//! after envp's NULL. Tally's runtime (`userland/src/start.rs`) reads exactly this.
//!
//! [`StackImage::build`] computes the whole region `[rsp, stack_top)` as bytes, pointers
//! already pointing at their final user addresses; the kernel copies the bytes below the
//! stack top of the new address space and starts the program with that `rsp`.

use alloc::vec::Vec;

use crate::elf::USER_HALF_END;
use crate::{ExecError, PAGE_SIZE};

/// Most bytes the whole image may take (Linux's classic `ARG_MAX`, 128 KiB): beyond it,
/// [`ExecError::ArgsTooLong`] (`E2BIG`).
pub const ARG_MAX: usize = 128 * 1024;

pub use tally_uapi::auxv::*;

/// Most items [`StackImage::build_with`] places on the stack (Linux places three: the
/// random bytes, the platform string and the file name).
pub const MAX_PLACED: usize = 8;

/// The initial stack of a program: copy `bytes` to `[rsp, stack_top)` and start with `rsp`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StackImage {
    /// Initial stack pointer: 16-byte aligned, pointing at `argc`.
    pub rsp: u64,
    /// The memory from `rsp` up to the stack top.
    pub bytes: Vec<u8>,
    /// `argc` as written.
    pub argc: usize,
    /// User address of `argv[0]`'s pointer (`rsp + 8`).
    pub argv: u64,
    /// User address of `envp[0]`'s pointer.
    pub envp: u64,
}

impl StackImage {
    /// Lays out `argv`, `envp` and the auxiliary vector `auxv` (the `AT_NULL` terminator is
    /// added here) below `stack_top`. Errors: `stack_top` not 16-byte aligned, above the user
    /// half or too low ([`ExecError::BadStackTop`]); a string containing NUL
    /// ([`ExecError::NulInArgument`]); more than [`ARG_MAX`] bytes in all
    /// ([`ExecError::ArgsTooLong`]).
    pub fn build(stack_top: u64, argv: &[&[u8]], envp: &[&[u8]], auxv: &[(u64, u64)]) -> Result<StackImage, ExecError> {
        Self::build_with(stack_top, argv, envp, auxv, &[])
    }

    /// [`StackImage::build`], and also copies each `(type, bytes)` of `placed` onto the stack,
    /// just below the strings, and adds `(type, its address)` to the auxiliary vector after
    /// `auxv`: Linux's `AT_RANDOM` (16 bytes), `AT_PLATFORM` and `AT_EXECFN` (strings with
    /// their NUL, which the caller includes). At most [`MAX_PLACED`] items (else `E2BIG`);
    /// they count toward [`ARG_MAX`].
    pub fn build_with(
        stack_top: u64,
        argv: &[&[u8]],
        envp: &[&[u8]],
        auxv: &[(u64, u64)],
        placed: &[(u64, &[u8])],
    ) -> Result<StackImage, ExecError> {
        if !stack_top.is_multiple_of(16) || stack_top > USER_HALF_END {
            return Err(ExecError::BadStackTop);
        }
        if placed.len() > MAX_PLACED {
            return Err(ExecError::ArgsTooLong);
        }
        // Sizes first, each step checked, so that nothing is allocated for an oversized request.
        let mut strings = 0usize;
        for s in argv.iter().chain(envp) {
            if s.contains(&0) {
                return Err(ExecError::NulInArgument);
            }
            strings = strings.checked_add(s.len() + 1).filter(|&n| n <= ARG_MAX).ok_or(ExecError::ArgsTooLong)?;
        }
        let mut blobs = 0usize;
        for (_, b) in placed {
            blobs = blobs.checked_add(b.len()).filter(|&n| n <= ARG_MAX).ok_or(ExecError::ArgsTooLong)?;
        }
        let words = argv
            .len()
            .checked_add(envp.len())
            .and_then(|n| n.checked_add(auxv.len().checked_add(placed.len())?.checked_mul(2)?))
            .and_then(|n| n.checked_add(1 + 1 + 1 + 2)) // argc, two NULLs, AT_NULL pair
            .filter(|&n| n <= ARG_MAX / 8)
            .ok_or(ExecError::ArgsTooLong)?;
        let total = (strings + blobs).div_ceil(16) * 16 + words * 8 + 15;
        if total > ARG_MAX {
            return Err(ExecError::ArgsTooLong);
        }
        // Addresses: strings at the very top, the placed items below them, then the pointer
        // block, rsp 16-aligned.
        let strings_start = stack_top.checked_sub(strings as u64).ok_or(ExecError::BadStackTop)?;
        let blobs_start = strings_start.checked_sub(blobs as u64).ok_or(ExecError::BadStackTop)?;
        let block_end = blobs_start & !15;
        let rsp = block_end.checked_sub(words as u64 * 8).ok_or(ExecError::BadStackTop)? & !15;
        if rsp < PAGE_SIZE {
            return Err(ExecError::BadStackTop);
        }

        let len = (stack_top - rsp) as usize; // at most ARG_MAX + 8: bounded above
        let mut bytes = Vec::with_capacity(len);
        let mut push = |v: u64| bytes.extend_from_slice(&v.to_le_bytes());
        push(argv.len() as u64);
        let mut at = strings_start;
        for s in argv {
            push(at);
            at += s.len() as u64 + 1;
        }
        push(0);
        let envp_addr = rsp + 8 * (argv.len() as u64 + 2);
        for s in envp {
            push(at);
            at += s.len() as u64 + 1;
        }
        push(0);
        for &(k, v) in auxv {
            push(k);
            push(v);
        }
        let mut at = blobs_start;
        for &(k, b) in placed {
            push(k);
            push(at);
            at += b.len() as u64;
        }
        push(AT_NULL);
        push(0);
        bytes.resize((blobs_start - rsp) as usize, 0);
        for (_, b) in placed {
            bytes.extend_from_slice(b);
        }
        for s in argv.iter().chain(envp) {
            bytes.extend_from_slice(s);
            bytes.push(0);
        }
        debug_assert_eq!(bytes.len(), len);
        Ok(StackImage { rsp, bytes, argc: argv.len(), argv: rsp + 8, envp: envp_addr })
    }

    /// The auxiliary vector as written: `(type, value)` pairs up to and excluding `AT_NULL`.
    pub fn auxv(&self) -> Vec<(u64, u64)> {
        let word = |addr: u64| -> Option<u64> {
            let i = usize::try_from(addr.checked_sub(self.rsp)?).ok()?;
            Some(u64::from_le_bytes(self.bytes.get(i..i + 8)?.try_into().ok()?))
        };
        let mut out = Vec::new();
        let mut at = self.envp;
        while word(at).is_some_and(|p| p != 0) {
            at += 8;
        }
        at += 8;
        while let (Some(k), Some(v)) = (word(at), word(at + 8)) {
            if k == AT_NULL {
                break;
            }
            out.push((k, v));
            at += 16;
        }
        out
    }

    /// The bytes at user address `addr` inside the image (`len` of them), if all are inside.
    pub fn bytes_at(&self, addr: u64, len: usize) -> Option<&[u8]> {
        let i = usize::try_from(addr.checked_sub(self.rsp)?).ok()?;
        self.bytes.get(i..i.checked_add(len)?)
    }

    /// The stack top the image was built for (`rsp + bytes.len()`).
    pub fn stack_top(&self) -> u64 {
        self.rsp + self.bytes.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(img: &StackImage, addr: u64) -> u64 {
        let i = (addr - img.rsp) as usize;
        u64::from_le_bytes(img.bytes[i..i + 8].try_into().unwrap())
    }

    fn cstr(img: &StackImage, addr: u64) -> &[u8] {
        let i = (addr - img.rsp) as usize;
        let end = img.bytes[i..].iter().position(|&b| b == 0).unwrap();
        &img.bytes[i..i + end]
    }

    #[test]
    fn system_v_layout() {
        let top = 0x7fff_ffff_f000;
        let img = StackImage::build(top, &[b"hello", b"world"], &[b"HOME=/"], &[(AT_PAGESZ, 4096)]).unwrap();
        assert_eq!(img.rsp % 16, 0);
        assert_eq!(img.stack_top(), top);
        assert_eq!(word(&img, img.rsp), 2);
        assert_eq!(img.argv, img.rsp + 8);
        assert_eq!(cstr(&img, word(&img, img.rsp + 8)), b"hello");
        assert_eq!(cstr(&img, word(&img, img.rsp + 16)), b"world");
        assert_eq!(word(&img, img.rsp + 24), 0);
        assert_eq!(img.envp, img.rsp + 32);
        assert_eq!(cstr(&img, word(&img, img.rsp + 32)), b"HOME=/");
        assert_eq!(word(&img, img.rsp + 40), 0);
        assert_eq!((word(&img, img.rsp + 48), word(&img, img.rsp + 56)), (AT_PAGESZ, 4096));
        assert_eq!((word(&img, img.rsp + 64), word(&img, img.rsp + 72)), (AT_NULL, 0));
        // The strings sit at the very top, argv[0] first.
        assert!(img.bytes.ends_with(b"hello\0world\0HOME=/\0"));
    }

    #[test]
    fn empty_argv_is_allowed() {
        let img = StackImage::build(0x10_0000, &[], &[], &[]).unwrap();
        assert_eq!(img.bytes.len(), 48, "argc, two NULLs, AT_NULL pair: 40 bytes, aligned to 48");
        assert_eq!(word(&img, img.rsp), 0);
        assert_eq!(img.rsp, 0x10_0000 - 48);
    }

    #[test]
    fn refusals() {
        assert_eq!(StackImage::build(0x10_0008, &[b"a"], &[], &[]), Err(ExecError::BadStackTop));
        assert_eq!(StackImage::build(1 << 48, &[b"a"], &[], &[]), Err(ExecError::BadStackTop));
        assert_eq!(StackImage::build(0x100, &[b"a"], &[], &[]), Err(ExecError::BadStackTop));
        assert_eq!(StackImage::build(0x10_0000, &[b"a\0b"], &[], &[]), Err(ExecError::NulInArgument));
        let big = alloc::vec![b'x'; ARG_MAX];
        assert_eq!(StackImage::build(0x10_0000, &[&big], &[], &[]), Err(ExecError::ArgsTooLong));
        let many: Vec<&[u8]> = alloc::vec![b"".as_slice(); ARG_MAX / 8];
        assert_eq!(StackImage::build(0x10_0000, &many, &[], &[]), Err(ExecError::ArgsTooLong));
        assert_eq!(ExecError::ArgsTooLong.errno(), tally_uapi::errno::E2BIG);
    }
}
