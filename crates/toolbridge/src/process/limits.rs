//! The open-file limit: every stdio server holds three pipes (stdin, stdout,
//! stderr) in the process that runs it, so the common soft limit of 1024
//! descriptors ends at about 300 servers with "Too many open files".

/// The soft open-file limit before and after [`raise_open_file_limit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFileLimit {
    /// The soft limit this process had.
    pub before: u64,
    /// The soft limit it has now (the hard limit, or `before` if that was
    /// already the hard limit).
    pub after: u64,
}

/// Raises this process's soft `RLIMIT_NOFILE` to its hard limit (on macOS,
/// to at most `OPEN_MAX`, which the kernel enforces), and returns both
/// values. A program that starts many stdio servers calls this once at
/// start; the library never changes a process limit by itself. Child
/// processes inherit the raised limit.
// `rlim_t` is not `u64` on every platform.
#[allow(clippy::unnecessary_cast)]
pub fn raise_open_file_limit() -> std::io::Result<OpenFileLimit> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid rlimit for getrlimit to fill in.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let before = limit.rlim_cur;
    #[allow(unused_mut)]
    let mut target = limit.rlim_max;
    #[cfg(target_os = "macos")]
    {
        // setrlimit refuses more than OPEN_MAX for the soft limit there.
        target = target.min(libc::OPEN_MAX as libc::rlim_t);
    }
    if target <= before {
        return Ok(OpenFileLimit {
            before: before as u64,
            after: before as u64,
        });
    }
    limit.rlim_cur = target;
    // SAFETY: `limit` is a valid rlimit.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(OpenFileLimit {
        before: before as u64,
        after: target as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raising_reaches_the_hard_limit_and_is_idempotent() {
        let first = raise_open_file_limit().expect("raise");
        assert!(first.after >= first.before);
        let second = raise_open_file_limit().expect("raise again");
        assert_eq!(second.before, first.after);
        assert_eq!(second.after, first.after);
    }
}
