//! Links the user programs with `link.ld` as static, non-position-independent executables.
//!
//! `x86_64-unknown-none` produces static PIEs by default (the kernel wants that: the boot
//! loader relocates it). A user program is simpler as a plain `ET_EXEC` at a fixed address:
//! `tally-loader` then loads it without applying relocations. `--no-pie` overrides the `-pie`
//! rustc passes (the last flag wins in lld); the code itself stays position-independent,
//! which is harmless. `rustc-link-arg-bins` reaches only this package's binaries.

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let target = std::env::var("TARGET").unwrap_or_default();
    println!("cargo:rerun-if-changed=link.ld");
    println!("cargo:rerun-if-changed=build.rs");
    if target == "x86_64-unknown-none" {
        println!("cargo:rustc-link-arg-bins=-T{dir}/link.ld");
        println!("cargo:rustc-link-arg-bins=--no-pie");
        println!("cargo:rustc-link-arg-bins=-znorelro");
        println!("cargo:rustc-link-arg-bins=--build-id=none");
    }
}
