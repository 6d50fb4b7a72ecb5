//! Who is on the other end of an HTTP connection: its address and, when it
//! comes from this machine over loopback TCP, the local user (uid) that owns
//! its socket.
//!
//! A loopback gateway without a token serves its own user only
//! ([`crate::security`]): any local account can connect to 127.0.0.1, and
//! the page and `/mcp` can start servers, that is, run commands as the
//! gateway's user. TCP carries no credentials (`SO_PEERCRED` is for Unix
//! sockets), but the kernel lists every TCP socket of the network namespace
//! with its owner in `/proc/net/tcp` and `/proc/net/tcp6` (`ss -e` reads the
//! same): the peer's socket is the line whose local address is the peer's
//! address and whose remote address is ours. Loopback never leaves the
//! namespace, so the peer's socket is always listed there. The lookup is done
//! once per connection (by the accept loop, `connections`, as axum's
//! `ConnectInfo`), not per request.
//!
//! Written by hand: no maintained crate looks up a TCP peer's owner (the
//! `procfs` crate parses these files, among a thousand others, for one
//! column).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// One connection's peer, as [`crate::security`] sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    /// The peer's address.
    pub addr: SocketAddr,
    /// The uid owning the peer's socket: `None` off loopback, or when the
    /// kernel did not list it (the socket closed in between).
    pub uid: Option<u32>,
}

impl Peer {
    /// The peer of a connection from `remote` to our `local` address.
    pub fn of(local: SocketAddr, remote: SocketAddr) -> Peer {
        let uid = if remote.ip().to_canonical().is_loopback() {
            socket_owner(remote, local)
        } else {
            None
        };
        Peer { addr: remote, uid }
    }
}

/// The uid of this process (the gateway's user).
pub fn own_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The owner of the TCP socket bound to `local` and connected to `remote`
/// (both as that socket sees them), from `/proc/net/tcp{,6}`.
pub fn socket_owner(local: SocketAddr, remote: SocketAddr) -> Option<u32> {
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().find_map(|file| {
        let table = std::fs::read_to_string(file).ok()?;
        owner_in(&table, local, remote)
    })
}

/// The uid column of the line of `table` (`/proc/net/tcp` text) whose
/// local and remote addresses are `local` and `remote`.
fn owner_in(table: &str, local: SocketAddr, remote: SocketAddr) -> Option<u32> {
    let (local, remote) = (canonical(local), canonical(remote));
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (l, r, uid) = (fields.get(1)?, fields.get(2)?, fields.get(7)?);
        (parse_addr(l)? == local && parse_addr(r)? == remote)
            .then(|| uid.parse().ok())
            .flatten()
    })
}

/// `a` with an IPv4-mapped IPv6 address as the IPv4 one.
fn canonical(a: SocketAddr) -> SocketAddr {
    SocketAddr::new(a.ip().to_canonical(), a.port())
}

/// `0100007F:1F90` (IPv4) or 32 hex digits and a port (IPv6): the kernel
/// prints the address as 32-bit words in host byte order.
fn parse_addr(text: &str) -> Option<SocketAddr> {
    let (ip, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| -> Option<[u8; 4]> {
        let hex = ip.get(i * 8..i * 8 + 8)?;
        Some(u32::from_str_radix(hex, 16).ok()?.to_ne_bytes())
    };
    let ip = match ip.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(0)?)),
        32 => {
            let mut bytes = [0u8; 16];
            for i in 0..4 {
                bytes[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            IpAddr::V6(Ipv6Addr::from(bytes))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip.to_canonical(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_endian = "little")]
    #[test]
    fn kernel_addresses_parse() {
        assert_eq!(
            parse_addr("0100007F:1F90"),
            Some("127.0.0.1:8080".parse().unwrap())
        );
        assert_eq!(
            parse_addr("00000000000000000000000001000000:0050"),
            Some("[::1]:80".parse().unwrap())
        );
        // ::ffff:127.0.0.1, as a dual-stack socket connected to 127.0.0.1 shows.
        assert_eq!(
            parse_addr("0000000000000000FFFF00000100007F:0050"),
            Some("127.0.0.1:80".parse().unwrap())
        );
        assert_eq!(parse_addr("zz:1"), None);
    }

    /// A real connection over loopback: its owner is this process's user.
    #[test]
    fn the_owner_of_a_loopback_connection_is_found() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let server = listener.local_addr().unwrap();
        let client = std::net::TcpStream::connect(server).unwrap();
        let (_accepted, from) = listener.accept().unwrap();
        assert_eq!(from, client.local_addr().unwrap());
        assert_eq!(Peer::of(server, from).uid, Some(own_uid()));
        // A connection that does not exist has no owner.
        let nobody: SocketAddr = "127.0.0.1:1".parse().unwrap();
        assert_eq!(Peer::of(server, nobody).uid, None);
    }
}
