//! A table's write gate: which transactions may write the table while its rows are
//! rebuilt under a new key (ALTER TABLE ... ADD PRIMARY KEY).
//!
//! "Writer" means a transaction inside the gate: one that writes the table, or a
//! transaction block that has read it (it holds the table to its end, as PostgreSQL's
//! ACCESS SHARE lock does, so a rebuild, DROP or TRUNCATE waits for it too).
//!
//! A transaction passes the gate of each table it writes before its first write
//! statement there plans the keys it will write, and stays inside until its commit is
//! installed or it rolls back ([`Writer`] leaves when dropped). A rebuild closes the gate:
//! it waits until no transaction is inside, then shuts it in one step, so that the rows it
//! reads are all committed and stay the newest until it reopens the gate. A writer that
//! arrives at a closed gate waits there, then finds the table's new definition (the
//! rebuild bumps the catalog version before it reopens) and plans again.
//!
//! Invariants:
//! - **Closed means empty.** The gate closes only in the same atomic step that sees no
//!   writer inside, and no writer enters while it is closed.
//! - **Waiting never blocks a writer that is inside.** A rebuild does not shut the gate
//!   while it waits for it to empty: a writer that already holds row locks elsewhere and
//!   comes to this table is never made to wait behind a rebuild that waits for another
//!   writer, so the gate adds no deadlock. The price is that a rebuild of a table with a
//!   writer always inside waits until that stops (or it is cancelled).
//! - **Cheap when open.** Entering and leaving an open gate is one atomic operation each;
//!   the mutex is taken only around waiting.
//!
//! DROP TABLE and TRUNCATE in a transaction close the gate the same way and keep it
//! closed until the transaction ends ([`ClosedGate`]), as PostgreSQL's ACCESS EXCLUSIVE
//! lock: they wait for the transactions writing the table, and every other statement
//! on the table, reading or writing, waits for them ([`WriteGate::wait_open`]).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{ArcMutexGuard, Condvar, Mutex, RawMutex};

use super::Table;
use crate::constants::WRITE_GATE_POLL;
use crate::error::{Error, Result};

/// What ends a wait at a gate besides it opening: checked every `WRITE_GATE_POLL`.
pub type Interrupts<'a> = &'a (dyn Fn() -> Result<()> + Sync);

/// The gate is closed: writers wait.
const CLOSED: u64 = 1 << 63;
/// A rebuild waits for the gate to empty: the last writer out wakes it.
const DRAINING: u64 = 1 << 62;
/// The number of writers inside.
const WRITERS: u64 = DRAINING - 1;

#[derive(Default)]
pub struct WriteGate {
    state: AtomicU64,
    /// Taken only to wait for, or to announce, a change of `state`.
    wait: Mutex<()>,
    changed: Condvar,
    /// One closer at a time (a rebuild, a DROP, a TRUNCATE).
    rebuild: Arc<Mutex<()>>,
}

impl WriteGate {
    /// Enter if the gate is open; false if it is closed (the caller then waits in
    /// [`WriteGate::enter_waiting`], off the async runtime's threads).
    pub fn try_enter(&self) -> bool {
        let mut s = self.state.load(Ordering::Acquire);
        loop {
            if s & CLOSED != 0 {
                return false;
            }
            assert!(s & WRITERS < WRITERS, "write gate writer count overflow");
            match self
                .state
                .compare_exchange_weak(s, s + 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
    }

    /// Wait until the gate is open and enter. Fails with what `interrupts` returns.
    pub fn enter_waiting(&self, interrupts: Interrupts<'_>) -> Result<()> {
        loop {
            if self.try_enter() {
                return Ok(());
            }
            let mut g = self.wait.lock();
            if self.state.load(Ordering::Acquire) & CLOSED != 0 {
                self.changed.wait_for(&mut g, WRITE_GATE_POLL);
            }
            drop(g);
            interrupts()?;
        }
    }

    fn leave(&self) {
        let before = self.state.fetch_sub(1, Ordering::AcqRel);
        assert!(
            before & WRITERS > 0,
            "a writer left a write gate it was not in"
        );
        assert!(
            before & CLOSED == 0,
            "a writer was inside a closed write gate"
        );
        if before == DRAINING | 1 {
            // Taking the lock orders this change before the rebuild's re-check.
            drop(self.wait.lock());
            self.changed.notify_all();
        }
    }

    /// Wait until no writer is inside and close the gate; it opens again when the
    /// returned guard is dropped. Fails with 57014 once `cancel` is raised.
    pub fn close(&self, cancel: &AtomicBool) -> Result<Closed<'_>> {
        let interrupts = || {
            if cancel.load(Ordering::Acquire) {
                Err(Error::canceled())
            } else {
                Ok(())
            }
        };
        let rebuild = self.close_with(&interrupts)?;
        Ok(Closed {
            gate: self,
            _rebuild: rebuild,
        })
    }

    /// Take the closer's lock, wait for the gate to empty and shut it; fails with what
    /// `interrupts` returns, leaving the gate as it was.
    fn close_with(&self, interrupts: Interrupts<'_>) -> Result<ArcMutexGuard<RawMutex, ()>> {
        let rebuild = loop {
            if let Some(g) = self.rebuild.try_lock_arc_for(WRITE_GATE_POLL) {
                break g;
            }
            interrupts()?;
        };
        self.state.fetch_or(DRAINING, Ordering::AcqRel);
        loop {
            if self
                .state
                .compare_exchange(DRAINING, CLOSED, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                return Ok(rebuild);
            }
            let mut g = self.wait.lock();
            if self.state.load(Ordering::Acquire) != DRAINING {
                self.changed.wait_for(&mut g, WRITE_GATE_POLL);
            }
            drop(g);
            if let Err(e) = interrupts() {
                self.state.fetch_and(!DRAINING, Ordering::AcqRel);
                return Err(e);
            }
        }
    }

    /// Whether the gate is closed.
    pub fn is_closed(&self) -> bool {
        self.state.load(Ordering::Acquire) & CLOSED != 0
    }

    /// Wait until the gate is open (without entering): a reader behind a DROP or
    /// TRUNCATE not yet committed. Fails with what `interrupts` returns.
    pub fn wait_open(&self, interrupts: Interrupts<'_>) -> Result<()> {
        while self.is_closed() {
            let mut g = self.wait.lock();
            if self.is_closed() {
                self.changed.wait_for(&mut g, WRITE_GATE_POLL);
            }
            drop(g);
            interrupts()?;
        }
        Ok(())
    }

    fn open(&self) {
        let before = self.state.swap(0, Ordering::AcqRel);
        assert_eq!(before, CLOSED, "a closed write gate had writers inside");
        drop(self.wait.lock());
        self.changed.notify_all();
    }

    /// Writers inside (tests and assertions).
    pub fn writers(&self) -> u64 {
        self.state.load(Ordering::Acquire) & WRITERS
    }
}

/// A closed gate; dropping it opens the gate and wakes the writers waiting at it.
pub struct Closed<'g> {
    gate: &'g WriteGate,
    _rebuild: ArcMutexGuard<RawMutex, ()>,
}

impl Closed<'_> {
    /// Debug check that the gate is still closed and empty.
    pub fn assert_closed(&self) {
        assert_eq!(self.gate.state.load(Ordering::Acquire), CLOSED);
    }
}

impl Drop for Closed<'_> {
    fn drop(&mut self) {
        self.gate.open();
    }
}

/// A table's gate closed by a transaction (DROP TABLE, TRUNCATE) until it ends: opens
/// when dropped, after the transaction's commit is installed or when it rolls back.
pub struct ClosedGate {
    table: Arc<Table>,
    _closer: ArcMutexGuard<RawMutex, ()>,
}

impl ClosedGate {
    /// Wait for the writers inside `table`'s gate to leave and close it.
    pub fn close(table: &Arc<Table>, interrupts: Interrupts<'_>) -> Result<ClosedGate> {
        let closer = table.write_gate().close_with(interrupts)?;
        Ok(ClosedGate {
            table: table.clone(),
            _closer: closer,
        })
    }

    pub fn table(&self) -> &Arc<Table> {
        &self.table
    }
}

impl Drop for ClosedGate {
    fn drop(&mut self) {
        self.table.write_gate().open();
    }
}

/// A transaction inside a table's write gate; leaves when dropped.
pub struct Writer {
    table: Arc<Table>,
}

impl Writer {
    /// Pass the gate of `table` if it is open; `None` if it is closed.
    pub fn try_enter(table: &Arc<Table>) -> Option<Writer> {
        table.write_gate().try_enter().then(|| Writer {
            table: table.clone(),
        })
    }

    /// Wait at the gate of `table` until it opens, then pass it.
    pub fn enter_waiting(table: &Arc<Table>, interrupts: Interrupts<'_>) -> Result<Writer> {
        table.write_gate().enter_waiting(interrupts)?;
        Ok(Writer {
            table: table.clone(),
        })
    }

    pub fn table(&self) -> &Arc<Table> {
        &self.table
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.table.write_gate().leave();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn closes_only_when_empty_and_writers_wait_while_closed() {
        let gate = Arc::new(WriteGate::default());
        assert!(gate.try_enter());
        assert!(gate.try_enter());
        let closer = {
            let gate = gate.clone();
            std::thread::spawn(move || {
                let never = AtomicBool::new(false);
                let closed = gate.close(&never).unwrap();
                closed.assert_closed();
                std::thread::sleep(Duration::from_millis(50));
            })
        };
        std::thread::sleep(Duration::from_millis(30));
        // Draining does not shut the gate: a writer may still come in.
        assert!(gate.try_enter());
        assert!(!closer.is_finished());
        gate.leave();
        gate.leave();
        assert!(!closer.is_finished());
        gate.leave();
        // Now empty: the closer shuts it, and writers wait until it opens.
        let mut closed_seen = false;
        for _ in 0..200 {
            if gate.state.load(Ordering::Acquire) & CLOSED != 0 {
                closed_seen = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(closed_seen);
        assert!(!gate.try_enter());
        gate.enter_waiting(&|| Ok(())).unwrap();
        assert!(closer.is_finished());
        assert_eq!(gate.writers(), 1);
        gate.leave();
        assert_eq!(gate.state.load(Ordering::Acquire), 0);
    }

    #[test]
    fn cancel_stops_both_kinds_of_wait() {
        let gate = WriteGate::default();
        let cancel = AtomicBool::new(true);
        assert!(gate.try_enter());
        let e = gate.close(&cancel).err().unwrap();
        assert_eq!(e.code, crate::error::SqlState::QUERY_CANCELED);
        // The cancelled close left the gate open, and no longer draining.
        assert_eq!(gate.state.load(Ordering::Acquire), 1);
        gate.leave();
        let never = AtomicBool::new(false);
        let closed = gate.close(&never).unwrap();
        let e = gate
            .enter_waiting(&|| Err(Error::canceled()))
            .err()
            .unwrap();
        assert_eq!(e.code, crate::error::SqlState::QUERY_CANCELED);
        drop(closed);
        assert!(gate.try_enter());
    }
}
