//! # tally-csa — SGI CSA job accounting, without the hardware
//!
//! CSA (Comprehensive System Accounting, SGI) accounts by *job*: every process a login
//! starts, directly or not, is in the login's job, and the accounting files say what each
//! job used — per process, and in total when the job ends. This crate is all of CSA that
//! does not need a machine; the kernel glues it to its exit path, `spawn`, three system
//! calls and its files, and the user tools use its formats. The semantics follow the SGI
//! CSA design (Kohnke and Lan, "Linux CSA Kernel Design", 2000–2004) and the records are
//! byte for byte those of CSA 4 on x86_64.
//!
//! ```text
//!   job_create ─► Csa::job_create ─► Jobs::create ─────────────────► SOJ record
//!   spawn ──────► Csa::spawn ──────► Jobs::inherit
//!   last thread ► Csa::process_exit ─► ProcessExit::records ─► route ─► base (+ mem, io, delay)
//!   exits                           └► Jobs::exit ─► last member? ───► EOJ record
//!   csa_ctl ────► Csa::prepare / Csa::control ───────────────────────► CFG records, states
//!   write error ► Csa::file_error ───────────────────────────────────► ERROFF, close
//!                         │
//!                         ▼  every one returns Effects: the kernel posts the bytes to its files
//!
//!   ja, csacom, csaswitch ─► parse::records ─► report::{ja, csacom, switch}, report::sbu
//! ```
//!
//! | module | what it holds |
//! |---|---|
//! | [`header`] | `struct achead`, the 8 bytes in front of every record |
//! | [`process`] | the kernel's [`ProcessExit`] in plain units, and the base, memory, I/O and delay records in CSA's units |
//! | [`job_record`] | start-of-job and end-of-job records |
//! | [`config_record`] | the configuration record and the condensed uname |
//! | [`parse`] | walking a file of records, refusing anything malformed |
//! | [`jobs`] | the job table: create, inherit, leave, the job's totals |
//! | [`state`] | [`Csa`]: the switches (OFF/ERROFF/ON), thresholds, files and their counters |
//! | [`mod@route`] | which bytes go to which file at an exit or a job's start |
//! | [`control`] | the `csa_ctl` requests, as a state machine |
//! | [`effects`] | what a decision asks the kernel to do |
//! | [`report`] | `csacom`, `ja` and `csaswitch` output, and system billing units |
//!
//! ## Memory
//!
//! The job table and the ja table are `Vec`s allocated once, in [`Csa::new`], for the
//! kernel's task limit; afterwards they shift entries within that room and never grow, so
//! nothing on the exit or spawn path allocates. Decisions return [`Effects`], a fixed-size
//! value. The report functions write to any `core::fmt::Write`.
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]

extern crate alloc;

pub mod config_record;
pub mod control;
pub mod effects;
pub mod header;
pub mod job_record;
pub mod jobs;
pub mod parse;
pub mod process;
pub mod report;
pub mod route;
pub mod state;
mod wire;

#[cfg(test)]
mod machine_tests;

pub use config_record::{CfgRecord, Uname};
pub use control::{Caller, CtlArg, Prepared};
pub use effects::{Action, Effects, FileId};
pub use job_record::{EojRecord, SojRecord};
pub use jobs::{Jid, JobError, Jobs, NewJob};
pub use parse::{records, ParseError, Record};
pub use process::{DelayUsage, IoUsage, MemoryUsage, ProcessExit, ProcessRecord};
pub use route::{route, Route, Routing, SystemRoute};
pub use state::{Csa, CsaConfig, FileCounters, Setting, State};
