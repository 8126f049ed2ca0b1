//! The auxiliary vector: what the kernel tells a new program about itself and the machine,
//! as `(type, value)` pairs above `envp` on its first stack (`getauxval(3)` reads them).
//! Linux's numbers (`include/uapi/linux/auxvec.h`, `arch/x86/include/uapi/asm/auxvec.h`);
//! what Tally puts there and why: `docs/user-mode.md` (section 3).

/// End of the vector.
pub const AT_NULL: u64 = 0;
/// Entry to be ignored.
pub const AT_IGNORE: u64 = 1;
/// Address of the program headers in memory (the C library finds `PT_TLS` and, in a static
/// PIE, `PT_DYNAMIC` through it).
pub const AT_PHDR: u64 = 3;
/// Size of one program header (56 for ELF64).
pub const AT_PHENT: u64 = 4;
/// Number of program headers.
pub const AT_PHNUM: u64 = 5;
/// The page size.
pub const AT_PAGESZ: u64 = 6;
/// Where the interpreter was loaded: 0, there is none.
pub const AT_BASE: u64 = 7;
/// Flags (none are defined on x86_64): 0.
pub const AT_FLAGS: u64 = 8;
/// The program's entry point.
pub const AT_ENTRY: u64 = 9;
/// Real and effective user and group ids.
pub const AT_UID: u64 = 11;
pub const AT_EUID: u64 = 12;
pub const AT_GID: u64 = 13;
pub const AT_EGID: u64 = 14;
/// Address of a NUL-terminated string naming the CPU ("x86_64").
pub const AT_PLATFORM: u64 = 15;
/// CPU capabilities: on x86_64, CPUID leaf 1's EDX.
pub const AT_HWCAP: u64 = 16;
/// The frequency `times(2)` counts in (`sysconf(_SC_CLK_TCK)`): 100.
pub const AT_CLKTCK: u64 = 17;
/// Nonzero for a set-uid start (the C library then ignores `LD_*`-style variables).
pub const AT_SECURE: u64 = 23;
/// Address of 16 random bytes (the C library's stack-protector canary and pointer guard).
pub const AT_RANDOM: u64 = 25;
/// Address of the file name the program was started from (a NUL-terminated string).
pub const AT_EXECFN: u64 = 31;

/// What `times(2)` and `AT_CLKTCK` count in (Linux's `USER_HZ`), whatever the tick rate.
pub const USER_HZ: u64 = 100;
/// `AT_PLATFORM`'s string on this architecture.
pub const PLATFORM: &[u8] = b"x86_64";
