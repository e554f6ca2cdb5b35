//! Memory accounting. The server's global allocator ([`CountingAllocator`]) counts, per
//! thread, the bytes it hands out less those it takes back, so that a step of work that
//! runs on one thread without yielding can be charged what it leaves allocated
//! ([`retained_by`]): a prepared statement costs the memory it holds, not its text's
//! length. Without the counting allocator (unit tests) every step retains nothing.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;

thread_local! {
    /// Bytes allocated on this thread less bytes freed on it (which may be negative:
    /// memory is often freed on another thread than the one that allocated it).
    static NET_BYTES: Cell<i64> = const { Cell::new(0) };
}

fn count(bytes: i64) {
    // A constant-initialized cell without a destructor: reachable for the thread's life.
    let _ = NET_BYTES.try_with(|c| c.set(c.get().wrapping_add(bytes)));
}

/// A global allocator that counts what `A` hands out on each thread.
pub struct CountingAllocator<A>(pub A);

// SAFETY: every call is passed on to `A` unchanged; only the counting is added.
unsafe impl<A: GlobalAlloc> GlobalAlloc for CountingAllocator<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = self.0.alloc(layout);
        if !p.is_null() {
            count(layout.size() as i64);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = self.0.alloc_zeroed(layout);
        if !p.is_null() {
            count(layout.size() as i64);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.0.dealloc(ptr, layout);
        count(-(layout.size() as i64));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = self.0.realloc(ptr, layout, new_size);
        if !p.is_null() {
            count(new_size as i64 - layout.size() as i64);
        }
        p
    }
}

/// Run `f` on this thread and return what it returned with the bytes it left allocated
/// (0 if it freed more than it allocated, or without the counting allocator).
pub fn retained_by<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let before = NET_BYTES.try_with(Cell::get).unwrap_or(0);
    let result = f();
    let after = NET_BYTES.try_with(Cell::get).unwrap_or(0);
    (result, after.saturating_sub(before).max(0) as usize)
}

/// The unit tests count too, so that [`retained_by`] can be tested.
#[cfg(test)]
#[global_allocator]
static TEST_ALLOCATOR: CountingAllocator<std::alloc::System> =
    CountingAllocator(std::alloc::System);

#[cfg(test)]
mod tests {
    use super::retained_by;

    #[test]
    fn a_step_is_charged_what_it_keeps_not_what_it_freed() {
        let (kept, bytes) = retained_by(|| vec![7u8; 10_000]);
        assert!((10_000..11_000).contains(&bytes), "{bytes}");
        let ((), freed) = retained_by(|| drop(vec![1u8; 50_000]));
        assert_eq!(freed, 0);
        let (grown, bytes) = retained_by(|| {
            let mut v = Vec::with_capacity(10);
            v.extend(0..100_000u32);
            v
        });
        assert!(bytes >= 400_000, "{bytes}");
        // Freeing what an earlier step kept is not charged to the step that frees it.
        let ((), bytes) = retained_by(|| drop((kept, grown)));
        assert_eq!(bytes, 0);
    }
}
