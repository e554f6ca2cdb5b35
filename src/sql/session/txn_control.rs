//! Transaction control: BEGIN / START TRANSACTION, SET TRANSACTION, COMMIT and ROLLBACK
//! (AND CHAIN), and savepoints, with PostgreSQL's warnings, errors and command tags.
//!
//! A savepoint is a mark in the transaction's state (`txn::Transaction::mark`: the write
//! set's journal position, its row locks, the tables it created and dropped) and in the
//! session's (SET LOCAL values, plans with deferred increments). ROLLBACK TO puts each
//! back (`txn::Transaction::rollback_to`) and restores SET LOCAL values. The savepoint
//! itself stays.
//!
//! An error inside a transaction with open savepoints keeps everything (writes, locks)
//! until ROLLBACK or ROLLBACK TO decides; without savepoints the transaction is aborted at
//! once, as nothing can bring it back.

use super::{Outcome, Session, TxnState};
use crate::error::{Error, Result, SqlState};
use crate::sql::foreign_keys::ConstraintModes;
use crate::sql::plan::{TxnModes, TxnStatement};
use crate::txn::{Isolation, TxnMark};

/// What ROLLBACK TO SAVEPOINT restores.
pub struct Savepoint {
    name: String,
    txn: TxnMark,
    local_restore: usize,
    increment_plans: usize,
    deferred_checks: usize,
    constraint_modes: ConstraintModes,
}

fn command(tag: &str) -> Result<Outcome> {
    Ok(Outcome::Command {
        tag: tag.to_string(),
    })
}

fn only_in_block(what: &str) -> Error {
    Error::new(
        SqlState::NO_ACTIVE_SQL_TRANSACTION,
        format!("{what} can only be used in transaction blocks"),
    )
}

fn no_such_savepoint(name: &str) -> Error {
    Error::new(
        SqlState::INVALID_SAVEPOINT_SPECIFICATION,
        format!("savepoint \"{name}\" does not exist"),
    )
}

fn no_transaction_warning() -> Error {
    Error::new(
        SqlState::NO_ACTIVE_SQL_TRANSACTION,
        "there is no transaction in progress",
    )
}

impl Session {
    pub(super) fn run_txn_control(&mut self, statement: &TxnStatement) -> Result<Outcome> {
        match statement {
            TxnStatement::Begin { modes, tag } => self.begin(*modes, tag),
            TxnStatement::SetTransaction { modes } => self.set_transaction(*modes),
            TxnStatement::SetSessionCharacteristics { modes } => {
                if let Some(i) = modes.isolation {
                    self.overrides
                        .insert("default_transaction_isolation", i.name().to_string());
                }
                if let Some(ro) = modes.read_only {
                    let v = if ro { "on" } else { "off" };
                    self.overrides
                        .insert("default_transaction_read_only", v.to_string());
                }
                command("SET")
            }
            TxnStatement::Commit { chain } => self.end_block(true, *chain),
            TxnStatement::Rollback { chain } => self.end_block(false, *chain),
            TxnStatement::Savepoint { name } => self.savepoint(name),
            TxnStatement::ReleaseSavepoint { name } => self.release_savepoint(name),
            TxnStatement::RollbackToSavepoint { name } => self.rollback_to_savepoint(name),
        }
    }

    /// The transaction block, if one is open (BEGIN ran).
    pub(super) fn block(&mut self) -> Option<&mut TxnState> {
        self.txn.as_mut().filter(|t| t.explicit)
    }

    /// Whether the current (or next) transaction is read-only.
    pub(super) fn txn_read_only(&self) -> bool {
        // A standby's transactions are all read-only, as in PostgreSQL's hot standby.
        if self.engine.is_standby() {
            return true;
        }
        match &self.txn {
            Some(t) => t.read_only,
            None => self.setting_is("default_transaction_read_only", "on"),
        }
    }

    fn begin(&mut self, modes: TxnModes, tag: &str) -> Result<Outcome> {
        if self.block().is_some() {
            self.warn(Error::new(
                SqlState::ACTIVE_SQL_TRANSACTION,
                "there is already a transaction in progress",
            ));
            return command(tag);
        }
        if modes.read_only == Some(false) && self.engine.is_standby() {
            return Err(read_write_in_recovery());
        }
        let default = self.default_isolation();
        let default_read_only = self.setting_is("default_transaction_read_only", "on");
        let t = self.txn();
        t.explicit = true;
        if !t.queried {
            t.isolation = modes.isolation.unwrap_or(default);
        }
        t.read_only = modes.read_only.unwrap_or(default_read_only);
        command(tag)
    }

    fn set_transaction(&mut self, modes: TxnModes) -> Result<Outcome> {
        if modes.read_only == Some(false) && self.engine.is_standby() {
            return Err(read_write_in_recovery());
        }
        let Some(t) = self.block() else {
            self.warn(only_in_block("SET TRANSACTION"));
            return command("SET");
        };
        if let Some(read_only) = modes.read_only {
            if !read_only && t.read_only && t.queried {
                return Err(Error::new(
                    SqlState::ACTIVE_SQL_TRANSACTION,
                    "transaction read-write mode must be set before any query",
                ));
            }
        }
        if let Some(isolation) = modes.isolation.filter(|&i| i != t.isolation) {
            if t.queried {
                return Err(Error::new(
                    SqlState::ACTIVE_SQL_TRANSACTION,
                    "SET TRANSACTION ISOLATION LEVEL must be called before any query",
                ));
            }
            if !t.savepoints.is_empty() {
                return Err(Error::new(
                    SqlState::ACTIVE_SQL_TRANSACTION,
                    "SET TRANSACTION ISOLATION LEVEL must not be called in a subtransaction",
                ));
            }
            t.isolation = isolation;
        }
        if let Some(read_only) = modes.read_only {
            t.read_only = read_only;
        }
        command("SET")
    }

    /// COMMIT (`commit`) or ROLLBACK, perhaps AND CHAIN: a failed block rolls back
    /// whatever was asked; a chain opens the next block at once, with the same modes
    /// (the session's defaults after a failed block).
    fn end_block(&mut self, commit: bool, chain: bool) -> Result<Outcome> {
        let word = if commit { "COMMIT" } else { "ROLLBACK" };
        let explicit = self.txn.as_ref().is_some_and(|t| t.explicit);
        if !explicit {
            if chain {
                return Err(only_in_block(&format!("{word} AND CHAIN")));
            }
            self.warn(no_transaction_warning());
        }
        let Some(t) = self.txn.take() else {
            return command(word);
        };
        let modes = (!t.failed).then_some(TxnModes {
            isolation: Some(t.isolation),
            read_only: Some(t.read_only),
        });
        let tag = if commit && !t.failed {
            self.txn = Some(t);
            self.commit_open()?;
            "COMMIT"
        } else {
            self.rollback(t);
            "ROLLBACK"
        };
        if chain {
            self.begin(modes.unwrap_or_default(), "BEGIN")?;
        }
        command(tag)
    }

    fn savepoint(&mut self, name: &str) -> Result<Outcome> {
        let Some(t) = self.block() else {
            return Err(only_in_block("SAVEPOINT"));
        };
        let savepoint = Savepoint {
            name: name.to_string(),
            txn: t.mark(),
            local_restore: t.local_restore.len(),
            increment_plans: t.increment_plans.len(),
            deferred_checks: t.deferred_checks.len(),
            constraint_modes: t.constraint_modes.clone(),
        };
        t.savepoints.push(savepoint);
        command("SAVEPOINT")
    }

    /// The innermost open savepoint called `name`.
    fn find_savepoint(t: &TxnState, name: &str) -> Result<usize> {
        t.savepoints
            .iter()
            .rposition(|s| s.name == name)
            .ok_or_else(|| no_such_savepoint(name))
    }

    fn release_savepoint(&mut self, name: &str) -> Result<Outcome> {
        let Some(t) = self.block() else {
            return Err(only_in_block("RELEASE SAVEPOINT"));
        };
        let at = Self::find_savepoint(t, name)?;
        t.savepoints.truncate(at);
        if t.savepoints.is_empty() {
            t.forget_marks();
        }
        command("RELEASE")
    }

    fn rollback_to_savepoint(&mut self, name: &str) -> Result<Outcome> {
        let Some(t) = self.block() else {
            return Err(only_in_block("ROLLBACK TO SAVEPOINT"));
        };
        let at = Self::find_savepoint(t, name)?;
        t.savepoints.truncate(at + 1);
        let (mark, local_restore, increment_plans, deferred_checks) = {
            let s = &t.savepoints[at];
            (s.txn, s.local_restore, s.increment_plans, s.deferred_checks)
        };
        t.constraint_modes = t.savepoints[at].constraint_modes.clone();
        t.deferred_checks.truncate(deferred_checks);
        t.txn.rollback_to(&mark);
        let locals = t
            .local_restore
            .split_off(local_restore.min(t.local_restore.len()));
        t.increment_plans.truncate(increment_plans);
        t.failed = false;
        self.restore_locals(locals);
        command("ROLLBACK")
    }

    /// SET CONSTRAINTS: outside a transaction block a warning and nothing more, as in
    /// PostgreSQL; a constraint made immediate has its deferred checks run now.
    pub(super) fn set_constraints(
        &mut self,
        names: Option<&[String]>,
        deferred: bool,
    ) -> Result<Outcome> {
        if self.block().is_none() {
            self.warn(only_in_block("SET CONSTRAINTS"));
            return command("SET CONSTRAINTS");
        }
        let mut modes = self
            .txn
            .as_ref()
            .map(|t| t.constraint_modes.clone())
            .unwrap_or_default();
        match names {
            None => modes.set_all(deferred),
            Some(names) => {
                let catalog = &self.engine.txn.catalog;
                for name in names {
                    let found = catalog
                        .table_names()
                        .iter()
                        .filter_map(|t| catalog.table(t))
                        .find_map(|t| {
                            t.def()
                                .foreign_keys
                                .iter()
                                .find(|f| f.name == *name)
                                .cloned()
                        });
                    // Primary keys, unique and check constraints are never deferrable.
                    let other = || {
                        catalog
                            .table_names()
                            .iter()
                            .filter_map(|t| catalog.table(t))
                            .any(|t| {
                                let def = t.def();
                                def.pkey_name.as_deref() == Some(name.as_str())
                                    || def.indexes.iter().any(|i| i.constraint && i.name == *name)
                                    || def.checks.iter().any(|c| c.name == *name)
                            })
                    };
                    match found {
                        None if other() => {
                            return Err(Error::new(
                                SqlState::WRONG_OBJECT_TYPE,
                                format!("constraint \"{name}\" is not deferrable"),
                            ))
                        }
                        None => {
                            return Err(Error::new(
                                SqlState::UNDEFINED_OBJECT,
                                format!("constraint \"{name}\" does not exist"),
                            ))
                        }
                        Some(fk) if !fk.deferrable => {
                            return Err(Error::new(
                                SqlState::WRONG_OBJECT_TYPE,
                                format!("constraint \"{name}\" is not deferrable"),
                            ))
                        }
                        Some(_) => modes.set(name, deferred),
                    }
                }
            }
        }
        if let Some(t) = self.txn.as_mut() {
            t.constraint_modes = modes.clone();
        }
        if !deferred {
            self.run_deferred_checks(Some(&modes))?;
        }
        command("SET CONSTRAINTS")
    }

    /// Queue a warning for the client (sent before the statement's result), unless
    /// `client_min_messages` asks for errors only.
    pub(super) fn warn(&mut self, warning: Error) {
        if !self.setting_is("client_min_messages", "error") {
            self.notices.push(warning);
        }
    }

    /// DROP ... IF EXISTS of a `kind` named `name` that is not there: PostgreSQL's NOTICE.
    pub(super) fn skipping(&mut self, kind: &str, name: &str) {
        self.warn(Error::new(
            SqlState::SUCCESSFUL_COMPLETION,
            format!("{kind} \"{name}\" does not exist, skipping"),
        ));
    }

    /// PostgreSQL's NOTICE for CREATE ... IF NOT EXISTS of a name that is taken.
    pub(super) fn skipping_existing(&mut self, kind: &str, name: &str) {
        self.warn(Error::new(
            SqlState::SUCCESSFUL_COMPLETION,
            format!("{kind} \"{name}\" already exists, skipping"),
        ));
    }

    /// The warnings the last statement raised, to send before its result.
    pub fn take_notices(&mut self) -> Vec<Error> {
        std::mem::take(&mut self.notices)
    }

    pub(super) fn default_isolation(&self) -> Isolation {
        let name = match self.overrides.get("default_transaction_isolation") {
            Some(v) => v.clone(),
            None => self
                .engine
                .settings
                .show("default_transaction_isolation")
                .unwrap_or_default(),
        };
        Isolation::from_name(&name).unwrap_or(Isolation::ReadCommitted)
    }
}

/// `READ WRITE` on a standby.
fn read_write_in_recovery() -> Error {
    Error::unsupported("cannot set transaction read-write mode during recovery")
}
