//! A scenario's check that `prstat`'s rows add up: with `prstat_rows_add_up = true`, every
//! `prstat -m` table on the console is found and each row's microstate columns (USR … INT,
//! the columns between USERNAME and VCX) must add up to 100 % within the rounding of its
//! columns (each is rounded to 0.1, so ± 0.05 per column), or be all zero (a thread that
//! spent the interval as a zombie, which prstat shows as zeros, as Solaris does). A run
//! with no prstat table fails: the check must have something to check.
//!
//! Why: a state without a column (INTERRUPTED had none, `userland/src/bin/prstat.rs`) makes
//! a busy row add up to less than 100, by the share of the missing state.

/// `Ok(rows checked)`, or the first row that does not add up.
pub fn check(console: &str) -> Result<usize, String> {
    let mut rows = 0;
    let mut columns: Option<usize> = None;
    for line in console.lines() {
        let line = line.trim_end_matches('\r');
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() == Some(&"PID") && words.get(1) == Some(&"USERNAME") {
            let n = words.iter().skip(2).take_while(|w| **w != "VCX").count();
            if n == 0 || n + 2 == words.len() {
                return Err(format!("a prstat header without microstate columns: {line:?}"));
            }
            columns = Some(n);
            continue;
        }
        let Some(n) = columns else { continue };
        if words.first() == Some(&"Total:") || words.len() < 2 + n || words[0].parse::<i64>().is_err() {
            columns = None;
            continue;
        }
        let mut sum = 0.0;
        for w in &words[2..2 + n] {
            sum += w.parse::<f64>().map_err(|_| format!("prstat row with a column that is not a share: {line:?}"))?;
        }
        let slack = 0.05 * n as f64 + 1e-9;
        if sum != 0.0 && (sum - 100.0).abs() > slack {
            return Err(format!("a prstat row adds up to {sum:.1} %, not 100 ± {slack:.2}: {line:?}"));
        }
        rows += 1;
    }
    if rows == 0 {
        return Err("no prstat row on the console to check".into());
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::check;

    const HEADER: &str =
        "   PID USERNAME   USR   SYS   TRP   TFL   DFL   LCK   SLP   LAT   INT  VCX  ICX  SCL  SIG PROCESS/NLWP";

    #[test]
    fn rows_that_add_up_pass_and_a_missing_share_fails() {
        let good = format!(
            "$ prstat 200\r\n{HEADER}\r\n     4 root      97.9   0.3   0.0   0.0   0.0   0.0   0.0   0.5   1.3    0  201    2    0 spin/1\r\n\
             \x20    2 root       0.0   0.0   0.0   0.0   0.0   0.0 100.0   0.0   0.0    0    0    0    0 sh/1\r\n\
             Total: 2 processes, 2 lwps, interval 0.200 s\r\n$ exit\r\n"
        );
        assert_eq!(check(&good), Ok(2));
        // The same row without its INT share: 98.7.
        let short = good.replace("0.5   1.3", "0.5   0.0");
        let e = check(&short).unwrap_err();
        assert!(e.contains("98.7"), "{e}");
    }

    #[test]
    fn rounding_is_allowed_zombies_pass_and_no_table_fails() {
        let rounded = format!(
            "{HEADER}\n     5 root      33.4  33.4  33.4   0.0   0.0   0.0   0.0   0.0   0.0    0    0    0    0 t/1\n\
             \x20    6 root       0.0   0.0   0.0   0.0   0.0   0.0   0.0   0.0   0.0    0    0    0    0 z/1\nTotal:\n"
        );
        assert_eq!(check(&rounded), Ok(2));
        assert!(check("$ hello\nhello: pid 3\n").is_err());
        assert!(check(&format!("{HEADER}\nTotal: 0 processes\n")).is_err(), "a table without rows");
    }
}
