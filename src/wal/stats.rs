//! Log statistics: the counters behind `pg_stat_wal` and the commit-group view.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use hdrhistogram::Histogram;
use parking_lot::Mutex;

pub struct WalStats {
    pub records: AtomicU64,
    pub bytes: AtomicU64,
    pub buffers_full: AtomicU64,
    pub writes: AtomicU64,
    pub syncs: AtomicU64,
    pub write_time_us: AtomicU64,
    pub sync_time_us: AtomicU64,
    pub flushes: AtomicU64,
    pub flushed_commits: AtomicU64,
    pub max_commits_per_flush: AtomicU64,
    /// Write + sync time of each flush, in microseconds.
    flush_latency_us: Mutex<Histogram<u64>>,
    /// Microseconds since 2000-01-01 when the counters were last reset.
    pub reset_at_us: AtomicU64,
}

impl Default for WalStats {
    fn default() -> Self {
        WalStats {
            records: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            buffers_full: AtomicU64::new(0),
            writes: AtomicU64::new(0),
            syncs: AtomicU64::new(0),
            write_time_us: AtomicU64::new(0),
            sync_time_us: AtomicU64::new(0),
            flushes: AtomicU64::new(0),
            flushed_commits: AtomicU64::new(0),
            max_commits_per_flush: AtomicU64::new(0),
            flush_latency_us: Mutex::new(
                Histogram::new_with_bounds(1, 60_000_000, 3).expect("valid histogram bounds"),
            ),
            reset_at_us: AtomicU64::new(0),
        }
    }
}

/// Flush latency percentiles, in microseconds.
pub struct FlushLatency {
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
}

impl WalStats {
    pub fn record_flush(&self, commits: u64, took: Duration) {
        self.flushes.fetch_add(1, Ordering::Relaxed);
        self.flushed_commits.fetch_add(commits, Ordering::Relaxed);
        self.max_commits_per_flush
            .fetch_max(commits, Ordering::Relaxed);
        let us = (took.as_micros() as u64).clamp(1, 60_000_000);
        let _ = self.flush_latency_us.lock().record(us);
    }

    pub fn flush_latency(&self) -> FlushLatency {
        let h = self.flush_latency_us.lock();
        FlushLatency {
            p50: h.value_at_quantile(0.5),
            p90: h.value_at_quantile(0.9),
            p99: h.value_at_quantile(0.99),
            max: h.max(),
        }
    }

    pub fn reset(&self, now_us: u64) {
        for c in [
            &self.records,
            &self.bytes,
            &self.buffers_full,
            &self.writes,
            &self.syncs,
            &self.write_time_us,
            &self.sync_time_us,
            &self.flushes,
            &self.flushed_commits,
            &self.max_commits_per_flush,
        ] {
            c.store(0, Ordering::Relaxed);
        }
        self.flush_latency_us.lock().reset();
        self.reset_at_us.store(now_us, Ordering::Relaxed);
    }
}
