//! # tally-frames — physical memory bookkeeping
//!
//! The boot loader hands the kernel a memory map: which ranges of physical memory are free
//! RAM. [`FrameAllocator`] turns those ranges into 4 KiB *frames*: it hands out never-used
//! frames by bumping through the ranges, and recycles freed frames from a free stack. It
//! keeps exact counters (frames in use, allocated, freed) because the tests of every
//! subsystem end with "frames back to baseline": a leak shows up as a number, not a hunch.
//! It also counts the references to each frame, so `fork` can share pages copy-on-write
//! and a frame goes back to the pool with its last mapping (`frames.rs`).
//!
//! Nothing here touches memory: the HAL (`tally-hal`'s `frames` and `paging`) owns the
//! allocator once the kernel has filled it, maps frames, and implements the `x86_64` crate's
//! allocator trait on top of this bookkeeping.
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]

extern crate alloc;

mod frames;

pub use frames::{CowWrite, FrameAllocator, FrameStats, FRAME_SIZE, MAX_REGIONS};
