//! # Accumulators: where the numbers of dead tasks go
//!
//! A task's accounting (its microstate times, its delays, its page faults) lives in the
//! kernel while the task runs (in Tally's, with the scheduler's per-task state). When it
//! ends, the numbers must not vanish with it:
//!
//! * **Exit of a thread** — its numbers are added to its thread group's *dead-threads total*.
//!   A process-wide query (msa `MSA_SELF`, taskstats by tgid, `RUSAGE_SELF`) is that total plus
//!   the live threads' own numbers: "all threads, past and present".
//! * **Reap of a process** — when the parent's `wait` collects a zombie, the child's whole
//!   total (its dead-threads total: by then every thread is dead) *and* the child's own
//!   children total are added to the parent's *children total* (msa `MSA_CHILDREN`,
//!   `RUSAGE_CHILDREN`). So grandchildren count, as on Linux, as long as every process in
//!   between waited for its children.
//!
//! The table does not know what the numbers are: it is generic over an accumulator `A` with
//! [`Accumulate`], and the kernel passes a *harvest* closure `FnMut(&mut T) -> A` to `exit`,
//! which hands over the task's final numbers at the very moment the task ends (Tally's kernel
//! reads its clocks under the table's lock just before).

/// A sum that can absorb another of its kind. `Default` is the empty sum.
///
/// Implement with wrapping arithmetic where counters may wrap (taskstats delay totals do).
pub trait Accumulate: Default + Clone {
    /// `self += other`.
    fn add(&mut self, other: &Self);
}

/// No accounting.
impl Accumulate for () {
    fn add(&mut self, _: &Self) {}
}

macro_rules! wrapping_ints {
    ($($t:ty)*) => {$(
        impl Accumulate for $t {
            fn add(&mut self, other: &Self) {
                *self = self.wrapping_add(*other);
            }
        }
    )*};
}
wrapping_ints!(u8 u16 u32 u64 u128 usize i32 i64);

/// Element-wise, e.g. one counter per microstate.
impl<X: Accumulate + Copy, const N: usize> Accumulate for [X; N]
where
    [X; N]: Default,
{
    fn add(&mut self, other: &Self) {
        for (a, b) in self.iter_mut().zip(other) {
            a.add(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_wrap_and_arrays_add_elementwise() {
        let mut a = u64::MAX;
        a.add(&2);
        assert_eq!(a, 1);
        let mut v = [1u64, 2, 3];
        v.add(&[10, 20, 30]);
        assert_eq!(v, [11, 22, 33]);
    }
}
