//! What the user tools print: `csacom`, `ja`, `csaswitch -c status`, and the system
//! billing units they charge.
//!
//! Every function reads records that [`crate::parse`] decoded and writes text to a
//! `core::fmt::Write`, so the same code prints in Tally's userland, in `cargo xtask acct`
//! on the host, and in the tests. Times are printed in UTC (Tally has no time zones).
