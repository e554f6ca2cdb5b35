//! Wire. (stub)

/// Placeholder until the protocol layer lands.
pub fn serve_connection(_stream: std::net::TcpStream, _engine: std::sync::Arc<crate::sql::Engine>) {
}
pub fn shutdown_all_connections() {}
pub fn refuse_connection(_stream: std::net::TcpStream, _message: &str) {}
