//! The reaper: a POSIX `sh` process that kills what is still registered when
//! the pipe from toolbridge closes, however toolbridge ended.

use std::process::{Child, ChildStdin, Command, Stdio};

/// Registrations, one per line: `g+PGID` / `g-PGID` for a server's process
/// group, `p+PID:START` / `p-PID` for a process that left its server's
/// group (START is its start time, so a reused pid is never signalled).
/// At the end of input: SIGTERM to all, half a second, SIGKILL to all.
const SCRIPT: &str = r#"
trap '' INT HUP TERM QUIT PIPE
groups=''
procs=''
while IFS= read -r line; do
  case $line in
    g+*) groups="$groups ${line#g+}" ;;
    g-*) g=${line#g-}; rest=''
         for x in $groups; do [ "$x" = "$g" ] || rest="$rest $x"; done
         groups=$rest ;;
    p+*) procs="$procs ${line#p+}" ;;
    p-*) p=${line#p-}; rest=''
         for x in $procs; do [ "${x%%:*}" = "$p" ] || rest="$rest $x"; done
         procs=$rest ;;
  esac
done
[ -z "$groups$procs" ] && exit 0
same() {
  want=$2
  [ -r "/proc/$1/stat" ] || return 1
  IFS= read -r s < "/proc/$1/stat" || return 1
  s=${s##*) }
  set -- $s
  [ "${20}" = "$want" ]
}
for g in $groups; do kill -s TERM -- "-$g" 2>/dev/null; done
for x in $procs; do same "${x%%:*}" "${x#*:}" && kill -s TERM "${x%%:*}" 2>/dev/null; done
sleep 0.5
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
for x in $procs; do same "${x%%:*}" "${x#*:}" && kill -s KILL "${x%%:*}" 2>/dev/null; done
exit 0
"#;

/// The running reaper.
#[derive(Debug)]
pub(super) struct Reaper {
    /// Kept so the reaper is waited for (no zombie) when the tracker drops.
    pub(super) child: Child,
    /// The write end of the reaper's stdin; closing it tells the reaper to
    /// kill everything still registered.
    pub(super) stdin: ChildStdin,
}

impl Reaper {
    /// Starts the reaper in a process group of its own.
    pub(super) fn spawn() -> std::io::Result<Reaper> {
        use std::os::unix::process::CommandExt;
        let mut child = Command::new("/bin/sh")
            .arg("-c")
            .arg(SCRIPT)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Its own group: a Ctrl-C meant for toolbridge must not kill the
            // reaper before it has done its job.
            .process_group(0)
            .spawn()?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| std::io::Error::other("reaper stdin missing"))?;
        Ok(Reaper { child, stdin })
    }
}
