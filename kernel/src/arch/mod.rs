//! # The arch layer: everything that touches the machine
//!
//! This folder is the only place in the kernel where `unsafe` appears: port and MMIO I/O,
//! control registers, descriptor tables, page tables, the heap's backing memory. Every
//! `unsafe` block carries a `// SAFETY:` comment saying why it holds. The rest of the kernel
//! (and the hardware-independent crates under `kernel/`) call the safe functions exported
//! here, much as Asterinas's "framekernel" keeps its unsafe code in one small trusted base.
//!
//! Only x86_64 exists; the indirection keeps the boundary visible.

pub mod x86_64;

pub use self::x86_64::*;
