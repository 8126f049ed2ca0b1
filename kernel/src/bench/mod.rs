//! In-kernel benchmarks, run with `bench=FILTER` on the command line (`cargo xtask bench`).
//!
//! Each benchmark repeats an operation `ops` times between two TSC reads and prints one
//! line `BENCH {"name":…,"param":…,"ops":…,"ticks":…,"ns_per_op":…}` that `xtask` parses.
//! The kernel is built twice, with the `accounting` feature on and off, and both runs are
//! compared side by side on the host. Nothing here judges a number: benchmarks report.
//!
//! What the numbers are: `README.md`, "Measured", and `docs/microstate-accounting.md`.

mod acct_records;
mod bus_records;
mod cases;
mod context_switch;
mod ubench;

use hal::qemu::ExitCode;

/// A benchmark: takes the harness and reports through it.
type Bench = fn(&mut Harness);

pub struct Harness {
    filter: &'static str,
    ran: usize,
}

impl Harness {
    /// Time `ops` calls of `op` and report them as `name`/`param`.
    pub fn measure(&mut self, name: &str, param: u64, ops: u64, mut op: impl FnMut(u64)) {
        op(0); // warm caches and lazily built state
        let t0 = hal::tsc::read();
        for i in 0..ops {
            op(i);
        }
        let ticks = hal::tsc::read() - t0;
        self.report(name, param, ops, ticks);
    }

    /// Report a measurement made by the benchmark itself.
    pub fn report(&mut self, name: &str, param: u64, ops: u64, ticks: u64) {
        let ns = crate::base::time::clock().ticks_to_ns(ticks);
        let per_op = ns as f64 / ops.max(1) as f64;
        println!(
            "BENCH {{\"name\":\"{name}\",\"param\":{param},\"ops\":{ops},\"ticks\":{ticks},\
             \"ns_per_op\":{per_op:.3},\"unit\":\"ns\"}}"
        );
        self.ran += 1;
    }
}

pub fn run(filter: &'static str) -> ! {
    let mut h = Harness { filter, ran: 0 };
    println!(
        "bench: accounting compiled {}; TSC {} Hz",
        if cfg!(feature = "accounting") { "in" } else { "out" },
        crate::base::time::clock().hz()
    );
    for (name, bench) in cases::ALL {
        if h.filter == "all" || name.contains(h.filter) {
            bench(&mut h);
        }
    }
    if h.ran == 0 {
        println!("bench: no benchmark matches '{filter}'");
        hal::qemu::exit(ExitCode::Failure);
    }
    hal::qemu::exit(ExitCode::Success)
}
