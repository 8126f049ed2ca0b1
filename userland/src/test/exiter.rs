//! `/test/exiter` — does nothing and exits with 0, silently: the process whose whole life
//! the `acct_exit` benchmark times (spawn, run, exit, reap), so that what differs between
//! its rows is the accounting at the exit, not console output.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

tally_rt::entry!(main);

fn main() -> i32 {
    0
}
