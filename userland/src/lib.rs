//! User programs for Tally. Ring-3 processes arrive with the user-mode work; until then this
//! crate only proves that userland builds for `x86_64-unknown-none` against the shared ABI.
#![no_std]
#![forbid(unsafe_code)]

pub use tally_uapi as uapi;
