//! `hello [ARGS...]` — the first user program: prints its arguments and exits with 0.
//!
//! It shows that the kernel loaded an ELF, built the System V stack, entered ring 3 and
//! serves `write` and `exit_group`. `getpid` and `getppid` are asked too (run by init,
//! pid 1, it shows ppid 1); a kernel without them is reported, not fatal.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use tally_rt::{println, sys};

tally_rt::entry!(main);

fn main() -> i32 {
    match (sys::getpid(), sys::getppid()) {
        (Ok(pid), Ok(ppid)) => println!("hello: pid {pid}, ppid {ppid}, argc {}", tally_rt::argc()),
        (Err(e), _) | (_, Err(e)) => println!("hello: getpid/getppid: {e}; argc {}", tally_rt::argc()),
    }
    for (i, a) in tally_rt::args().enumerate() {
        println!("hello: argv[{i}] = \"{a}\"");
    }
    0
}
