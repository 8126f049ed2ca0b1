//! # base — what every layer of the kernel stands on
//!
//! The configuration (`config.rs`: the tick rate and the kernel's limits), the console
//! (`print!`/`println!` and the log), the clocks (`time.rs`: the TSC calibrated at boot,
//! monotonic and wall-clock time), the kernel's random numbers (`random.rs`), the command line, the memory pool (`memory.rs`: the
//! frame allocator handed to the HAL, and the counters leak checks compare) and the panic
//! handler. Nothing here knows about tasks.
//!
//! Where it sits: `docs/architecture.md` (the floors); the clocks: `docs/boot-and-interrupts.md`.

#[macro_use]
pub mod console;
pub mod cmdline;
pub mod config;
pub mod memory;
mod panic;
pub mod random;
pub mod time;
