//! The boot demo (`cargo xtask run`): a mix of kernel threads, then where their time went.
//!
//! Two CPU-bound threads share the CPU at nice 0 and nice 10 (2.6 gives them 100 ms and
//! 50 ms slices, so about 2:1), a real-time FIFO thread wakes up for short bursts and
//! preempts them, a sleeper naps, and a disk thread reads and writes the data disk. When
//! all are done, init prints each one's microstates in the manner of `prstat -m`, and the
//! per-IRQ table, then ends the run.
//!
//! `cargo xtask run` shows it first; `README.md` describes what it prints.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};

pub mod tables;

use crate::base::time;
use crate::drivers;
use crate::sched;
use crate::sched::SchedParams;
use crate::{acct, proc};
use tables::Row;

static STOP: AtomicBool = AtomicBool::new(false);

fn spin_ms(ms: u64) {
    let until = hal::tsc::read() + time::clock().ns_to_ticks(ms * 1_000_000);
    while hal::tsc::read() < until {
        core::hint::spin_loop();
    }
}

fn cpu_bound(_: u64) {
    while !STOP.load(Ordering::Relaxed) {
        core::hint::spin_loop();
    }
}

fn realtime(_: u64) {
    for _ in 0..4 {
        sched::sleep_ns(80_000_000);
        spin_ms(20);
    }
}

fn sleeper(_: u64) {
    for _ in 0..20 {
        sched::sleep_ns(15_000_000);
    }
}

fn disk_io(_: u64) {
    let Some(disk) = drivers::ata::disk(drivers::ata::DATA_DISK) else { return };
    let mut buf = [0u8; 512];
    for lba in 0..64u64 {
        let _ = disk.read(lba, &mut buf);
        let _ = disk.write(1000 + lba, &buf);
    }
}

pub fn run() -> Result<(), &'static str> {
    println!("demo: starting a mix of kernel threads");
    let threads: [(&str, SchedParams, fn(u64)); 5] = [
        ("cpu-nice0", SchedParams::Normal(0), cpu_bound),
        ("cpu-nice10", SchedParams::Normal(10), cpu_bound),
        ("rt-fifo", SchedParams::Fifo(10), realtime),
        ("sleeper", SchedParams::Normal(0), sleeper),
        ("disk-rw", SchedParams::Normal(0), disk_io),
    ];
    let mut pids = Vec::new();
    for (name, params, entry) in threads {
        pids.push((proc::spawn(name, params, entry, 0).map_err(|_| "spawn failed")?, name));
    }
    sched::sleep_ns(600_000_000);
    STOP.store(true, Ordering::Relaxed);
    let mut rows = Vec::new();
    for (pid, name) in pids {
        let r = proc::wait(Some(pid)).map_err(|_| "wait failed")?;
        rows.push(Row { pid, name, clocks: r.at_reap });
    }
    println!("\nmicrostates of the demo's threads (ms, and % of each one's life):");
    tables::microstates(&rows);
    println!("\ninterrupts:");
    tables::irq_lines(&acct::snapshot().irq_lines);
    Ok(())
}
