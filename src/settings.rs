//! Server settings (GUCs): PostgreSQL's names, units and SHOW formats.
//! Placeholder: filled in by the server layer work.

pub struct Settings {}

impl Settings {
    /// The value of a setting as SHOW prints it, or None for an unknown name.
    pub fn show(&self, name: &str) -> Option<String> {
        let _ = name;
        unimplemented!("Settings::show")
    }
}
