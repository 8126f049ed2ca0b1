//! A host process run with a deadline: its standard output and error collected while it
//! runs (so a chatty process never blocks on a full pipe), killed if it outlives the deadline.
//! The test binaries of `grade` and Linux under QEMU for `bench --linux` run this way; Tally's
//! own QEMU runs have more ways to end and keep theirs (`qemu.rs`).

/// Wait for `child`, collecting its output; `None` as the status if it was killed at `timeout`.
pub fn wait_with_timeout(
    mut child: std::process::Child,
    timeout: Option<std::time::Duration>,
) -> Result<(Option<std::process::ExitStatus>, String, String), String> {
    use std::io::Read;
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(s);
        }
        if timeout.is_some_and(|t| started.elapsed() > t) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let out = String::from_utf8_lossy(&out.join().unwrap_or_default()).into_owned();
    let err = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
    Ok((status, out, err))
}
