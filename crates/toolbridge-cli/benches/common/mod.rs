//! What the benchmarks share: the load driver, CPU clocks, statistics over
//! interleaved rounds, the table, and toolbridge's full call path.
//!
//! Numbers on a shared machine are noise in absolute terms; every figure is
//! a median over rounds, and every comparison is a ratio against a baseline
//! measured in the same process, round by round.

#![allow(dead_code)]

use std::{
    future::Future,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use toolbridge::{
    adapter::{Tool, ToolError, ToolRegistry, load_mcp_tools},
    format::flatten_content,
    pool::Pool,
    rmcp_model::JsonObject,
};

/// The benchmarks run on the allocator the `toolbridge` binary ships with,
/// so their figures are the program's; the baselines, in the same process,
/// share it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The toolbridge binary (its `example-server` is the peer of every benchmark).
pub fn toolbridge_exe() -> &'static str {
    env!("CARGO_BIN_EXE_toolbridge")
}

/// The arguments of every `echo` call: a 100-byte text, as in the issue's
/// reference table.
pub fn echo_args() -> JsonObject {
    let mut args = JsonObject::new();
    args.insert("text".into(), "x".repeat(100).into());
    args
}

/// Benchmark options from the command line (`cargo bench --bench NAME -- ...`).
#[derive(Debug, Clone)]
pub struct Options {
    /// Interleaved rounds; every figure is the median over them.
    pub rounds: usize,
    /// Calls per sequential run.
    pub seq_calls: u64,
    /// Calls per concurrent run.
    pub conc_calls: u64,
    /// Calls in flight in a concurrent run.
    pub in_flight: u64,
    /// Also measure with a multi-thread client runtime.
    pub multi_thread: bool,
    /// Free-form words after the options (which parts to run).
    pub only: Vec<String>,
}

impl Options {
    /// Parses `--rounds N --seq N --conc N --in-flight N --no-multi-thread
    /// --only PART[,PART...]`, ignoring the `--bench` cargo passes.
    pub fn from_args(defaults: Options) -> Options {
        let mut o = defaults;
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            let mut num = |name: &str| -> u64 {
                args.next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| panic!("{name} needs a number"))
            };
            match arg.as_str() {
                "--bench" => {}
                "--rounds" => o.rounds = num("--rounds") as usize,
                "--seq" => o.seq_calls = num("--seq"),
                "--conc" => o.conc_calls = num("--conc"),
                "--in-flight" => o.in_flight = num("--in-flight"),
                "--no-multi-thread" => o.multi_thread = false,
                // The same as naming the parts after the options.
                "--only" => o.only.extend(
                    args.next()
                        .expect("--only needs a part's name (or several, comma-separated)")
                        .split(',')
                        .filter(|p| !p.is_empty())
                        .map(str::to_owned),
                ),
                "--quick" => {
                    o.rounds = 3;
                    o.seq_calls /= 5;
                    o.conc_calls /= 5;
                }
                other if other.starts_with("--") => panic!("unknown option {other}"),
                other => o.only.push(other.to_owned()),
            }
        }
        o
    }

    /// True when no part was named, or `part` was.
    pub fn wants(&self, part: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|p| p == part)
    }
}

/// CPU time (user + system) of this whole process.
pub fn cpu_process() -> Duration {
    rusage(libc::RUSAGE_SELF)
}

/// CPU time (user + system) of the calling thread.
pub fn cpu_thread() -> Duration {
    rusage(libc::RUSAGE_THREAD)
}

fn rusage(who: libc::c_int) -> Duration {
    // SAFETY: getrusage writes into the struct we pass and nothing else.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(who, &mut usage) };
    assert_eq!(rc, 0, "getrusage failed");
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// The CPU clock of another thread of this process (nanosecond precision),
/// to subtract an in-process server's CPU from the process's.
#[derive(Debug, Clone, Copy)]
pub struct ThreadClock(libc::clockid_t);

impl ThreadClock {
    /// The clock of the thread behind `handle`.
    pub fn of<T>(handle: &std::thread::JoinHandle<T>) -> ThreadClock {
        use std::os::unix::thread::JoinHandleExt;
        let mut clock: libc::clockid_t = 0;
        // SAFETY: the thread is alive (we hold its handle); the call writes `clock`.
        let rc = unsafe { libc::pthread_getcpuclockid(handle.as_pthread_t(), &mut clock) };
        assert_eq!(rc, 0, "pthread_getcpuclockid failed");
        ThreadClock(clock)
    }

    /// CPU time the thread has used so far.
    pub fn now(&self) -> Duration {
        // SAFETY: clock_gettime writes into `ts` and nothing else.
        let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::clock_gettime(self.0, &mut ts) };
        assert_eq!(rc, 0, "clock_gettime failed");
        Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
    }
}

/// What one run measured.
#[derive(Debug, Clone)]
pub struct Run {
    pub calls: u64,
    pub errors: u64,
    pub wall: Duration,
    /// Client CPU over the run.
    pub cpu: Duration,
    /// Per-call latencies, sorted.
    pub latencies: Vec<Duration>,
}

impl Run {
    pub fn calls_per_sec(&self) -> f64 {
        self.calls as f64 / self.wall.as_secs_f64()
    }

    pub fn cpu_us_per_call(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e6 / self.calls as f64
    }

    /// Nearest-rank percentile, in microseconds.
    pub fn percentile_us(&self, q: f64) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        let n = self.latencies.len();
        let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
        self.latencies[rank - 1].as_secs_f64() * 1e6
    }
}

/// Runs `calls` calls of `call`, `in_flight` at a time. On a current-thread
/// runtime the workers are futures joined in the calling task (as an agent
/// runs a batch of tool calls with `join_all`); on a multi-thread runtime
/// each worker is a task, so the runtime can spread them over its threads.
/// `call` returns false for a failed call. The CPU is measured with `cpu`
/// (a process or thread clock).
pub async fn drive<F, Fut>(calls: u64, in_flight: u64, cpu: impl Fn() -> Duration, call: F) -> Run
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = bool> + Send + 'static,
{
    let call = Arc::new(call);
    let next = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let worker = || {
        let call = call.clone();
        let next = next.clone();
        let errors = errors.clone();
        async move {
            let mut latencies = Vec::with_capacity((calls / in_flight + 1) as usize);
            while next.fetch_add(1, Ordering::Relaxed) < calls {
                let sent = Instant::now();
                let ok = call().await;
                latencies.push(sent.elapsed());
                if !ok {
                    errors.fetch_add(1, Ordering::Relaxed);
                }
            }
            latencies
        }
    };
    let workers = in_flight.min(calls);
    let spread = tokio::runtime::Handle::current().runtime_flavor()
        == tokio::runtime::RuntimeFlavor::MultiThread;
    let cpu_before = cpu();
    let began = Instant::now();
    let lists: Vec<Vec<Duration>> = if spread {
        let handles: Vec<_> = (0..workers).map(|_| tokio::spawn(worker())).collect();
        let mut lists = Vec::new();
        for handle in handles {
            lists.push(handle.await.expect("worker panicked"));
        }
        lists
    } else {
        futures::future::join_all((0..workers).map(|_| worker())).await
    };
    let wall = began.elapsed();
    let cpu = cpu().saturating_sub(cpu_before);
    let mut latencies: Vec<Duration> = lists.into_iter().flatten().collect();
    latencies.sort_unstable();
    Run {
        calls,
        errors: errors.load(Ordering::Relaxed),
        wall,
        cpu,
        latencies,
    }
}

/// The median of `xs` (NaN-free input expected).
pub fn median(xs: &[f64]) -> f64 {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Every round's runs of one (mode, client) row.
#[derive(Debug, Default)]
pub struct Row {
    pub runs: Vec<Run>,
}

impl Row {
    pub fn calls_per_sec(&self) -> f64 {
        median(&self.runs.iter().map(Run::calls_per_sec).collect::<Vec<_>>())
    }
    pub fn p50_us(&self) -> f64 {
        median(
            &self
                .runs
                .iter()
                .map(|r| r.percentile_us(0.5))
                .collect::<Vec<_>>(),
        )
    }
    pub fn p99_us(&self) -> f64 {
        median(
            &self
                .runs
                .iter()
                .map(|r| r.percentile_us(0.99))
                .collect::<Vec<_>>(),
        )
    }
    pub fn cpu_us_per_call(&self) -> f64 {
        median(
            &self
                .runs
                .iter()
                .map(Run::cpu_us_per_call)
                .collect::<Vec<_>>(),
        )
    }
    pub fn errors(&self) -> u64 {
        self.runs.iter().map(|r| r.errors).sum()
    }
}

/// The median over rounds of `num`'s metric divided by `den`'s, round by
/// round (runs of one round were measured next to each other, so the ratio
/// cancels most of the machine's drift).
pub fn ratio(num: &Row, den: &Row, metric: impl Fn(&Run) -> f64) -> f64 {
    let per_round: Vec<f64> = num
        .runs
        .iter()
        .zip(&den.runs)
        .map(|(a, b)| metric(a) / metric(b))
        .collect();
    median(&per_round)
}

/// Prints a table of rows (label, row) under `title`.
pub fn print_table(title: &str, rows: &[(String, &Row)]) {
    println!();
    println!("{title}");
    println!(
        "| {:<60} | {:>10} | {:>9} | {:>9} | {:>12} | {:>6} |",
        "client", "calls/s", "p50 µs", "p99 µs", "CPU µs/call", "errors"
    );
    println!(
        "|{:-<62}|{:->12}|{:->11}|{:->11}|{:->14}|{:->8}|",
        "", "", "", "", "", ""
    );
    for (label, row) in rows {
        println!(
            "| {:<60} | {:>10.0} | {:>9.1} | {:>9.1} | {:>12.2} | {:>6} |",
            label,
            row.calls_per_sec(),
            row.p50_us(),
            row.p99_us(),
            row.cpu_us_per_call(),
            row.errors()
        );
    }
}

/// The tools of `server`, registered the way an agent engine would.
pub async fn registry_for(pool: &Pool, server: &str) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for adapter in load_mcp_tools(pool, &[server.to_owned()]).await {
        registry.register(adapter).expect("unique tool names");
    }
    registry
}

/// toolbridge's full path for one tool call: from "the model asked for tool
/// `name` with these arguments" to "the text the model gets back"
/// (registry → adapter → pool → transport → server → flattened string).
pub async fn toolbridge_call(
    registry: &ToolRegistry,
    name: &str,
    args: &JsonObject,
) -> Result<String, ToolError> {
    let tool = registry.get(name).expect("tool registered");
    let result = tool.call(args.clone()).await?;
    Ok(flatten_content(&result))
}

/// The resident set size of this process, in KiB (from /proc/self/status).
pub fn rss_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} missing from /proc/self/status"))
}

/// A current-thread or multi-thread runtime.
pub fn runtime(multi_thread: bool) -> tokio::runtime::Runtime {
    let mut builder = if multi_thread {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    builder.enable_all().build().expect("tokio runtime")
}
