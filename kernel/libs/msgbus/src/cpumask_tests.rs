//! Tests of `cpumask.rs` (kept apart: lab 8 hands out cpumask.rs for editing).

use super::*;

fn p(s: &str, n: u32) -> Result<u64, i32> {
    parse_cpulist(s.as_bytes(), n)
}

#[test]
fn the_example_of_linux_taskstats_documentation() {
    assert_eq!(p("1-3,5,7-8", 16), Ok(0b1_1010_1110));
    assert_eq!(format_cpulist(0b1_1010_1110), "1-3,5,7-8");
}

#[test]
fn accepted_forms() {
    assert_eq!(p("0", 1), Ok(1));
    assert_eq!(p("0\0", 1), Ok(1));
    assert_eq!(p("0\n", 1), Ok(1));
    assert_eq!(p("0\n\0", 1), Ok(1));
    assert_eq!(p("1-3\0garbage", 4), Ok(0b1110));
    assert_eq!(p(" 0, 2 ", 4), Ok(0b101));
    assert_eq!(p(",,0,,1,", 4), Ok(0b11));
    assert_eq!(p("0 2\t3", 4), Ok(0b1101));
    assert_eq!(p("1\n3", 4), Ok(0b1010));
    assert_eq!(p("007", 8), Ok(0x80));
    assert_eq!(p("3-3", 4), Ok(0b1000));
    assert_eq!(p("2,0-1,1", 4), Ok(0b111));
    assert_eq!(p("0-63", 64), Ok(u64::MAX));
    assert_eq!(p("63", 64), Ok(1 << 63));
    assert_eq!(p("0-63", 100), Ok(u64::MAX)); // nr_cpus clamped to 64
}

#[test]
fn rejected_forms() {
    for bad in [
        "",
        "\0",
        ",",
        " \n",
        "\x000", // empty
        "3-1",   // reversed
        "4",
        "0-4",
        "64",
        "99999999999999999999", // beyond nr_cpus = 4
        "a",
        "1a",
        "1-",
        "-1",
        "1--2",
        "1 - 3",
        "1-2-3",
        "+1",
        "1:2",
        "1;2",
        "0x1",
        "all",
        "N",
        "0-3:1/2",
        "\u{e9}",
        "1-\x002",
    ] {
        assert_eq!(p(bad, 4), Err(EINVAL), "{bad:?}");
    }
    assert_eq!(parse_cpulist(&[0xff, b'1'], 4), Err(EINVAL));
    assert_eq!(p("0", 0), Err(EINVAL));
}

#[test]
fn formatting() {
    assert_eq!(format_cpulist(0), "");
    assert_eq!(format_cpulist(1), "0");
    assert_eq!(format_cpulist(0b11), "0-1");
    assert_eq!(format_cpulist(0b100111), "0-2,5");
    assert_eq!(format_cpulist(u64::MAX), "0-63");
    assert_eq!(format_cpulist(1 << 63 | 1), "0,63");
    for m in [1u64, 0xdead_beef, u64::MAX, 1 << 63, 0x8000_0000_0000_0001] {
        assert_eq!(parse_cpulist(format_cpulist(m).as_bytes(), 64), Ok(m));
    }
}
