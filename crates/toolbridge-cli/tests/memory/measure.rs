//! The peak-memory figure the memory bounds rely on.

use std::process::Command;

use crate::common;

#[cfg(target_os = "linux")]
#[test]
fn run_measured_reads_the_peak_memory_of_the_process_itself() {
    // The tests of issue 16 bound toolbridge's memory with this figure.
    // A child's figure starts at what the test process had when it was
    // spawned (seen: 22 MB for `pass` while other tests ran), so the big
    // child takes 192 MB, past anything the test process holds, and must
    // come out at least 120 MB above the small one.
    let small = common::run_measured(Command::new(common::python()).args(["-c", "pass"]));
    let big = common::run_measured(
        Command::new(common::python()).args(["-c", "b = bytearray(192 << 20)"]),
    );
    assert_eq!(small.run.code, Some(0));
    assert_eq!(big.run.code, Some(0));
    assert!(
        big.peak_kib >= small.peak_kib + 120 * 1024,
        "small {} KiB, big {} KiB",
        small.peak_kib,
        big.peak_kib
    );
}
