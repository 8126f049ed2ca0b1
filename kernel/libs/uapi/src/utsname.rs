//! `uname(2)`: Linux's `struct utsname` (`<sys/utsname.h>`, `new_utsname` in
//! `include/uapi/linux/utsname.h`): six NUL-terminated fields of 65 bytes each.
//!
//! Tally answers `sysname` = `"Linux"`, as other kernels that speak Linux's system-call ABI
//! do (gVisor, WSL 1): programs test `sysname` to choose Linux's code paths (build scripts,
//! language runtimes), and Tally wants exactly those. `release` names the Linux version
//! whose ABI the calls follow, with `-tally` after it so that a person (or a program that
//! cares) can tell; `version` says which kernel this really is. `docs/linux-abi.md`.

/// Bytes per field (`__NEW_UTS_LEN + 1`).
pub const UTS_FIELD: usize = 65;
/// The whole structure: six fields.
pub const UTSNAME_SIZE: usize = 6 * UTS_FIELD;

pub const SYSNAME: &str = "Linux";
pub const NODENAME: &str = "tally";
/// The Linux release whose system-call ABI Tally follows (`bench --linux` compares with 6.1).
pub const RELEASE: &str = "6.1.0-tally";
pub const VERSION: &str = "#1 Tally (accounting internals)";
pub const MACHINE: &str = "x86_64";
/// Linux's answer when no NIS domain is set.
pub const DOMAINNAME: &str = "(none)";

/// The structure as `uname` writes it: each field's text, NUL-padded to [`UTS_FIELD`].
pub fn utsname_bytes() -> [u8; UTSNAME_SIZE] {
    let mut out = [0u8; UTSNAME_SIZE];
    for (i, field) in [SYSNAME, NODENAME, RELEASE, VERSION, MACHINE, DOMAINNAME].iter().enumerate() {
        let n = field.len().min(UTS_FIELD - 1);
        out[i * UTS_FIELD..i * UTS_FIELD + n].copy_from_slice(&field.as_bytes()[..n]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_sit_at_linux_offsets_and_end_in_nul() {
        let b = utsname_bytes();
        assert_eq!(&b[..6], b"Linux\0");
        assert_eq!(&b[4 * UTS_FIELD..4 * UTS_FIELD + 7], b"x86_64\0");
        for i in 0..6 {
            assert_eq!(b[i * UTS_FIELD + UTS_FIELD - 1], 0, "field {i} is terminated");
        }
    }
}
