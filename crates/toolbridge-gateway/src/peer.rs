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

use netlink_packet_core::{NLM_F_REQUEST, NetlinkHeader, NetlinkMessage, NetlinkPayload};
use netlink_packet_sock_diag::{
    AF_INET, AF_INET6, IPPROTO_TCP, SockDiagMessage,
    inet::{ExtensionFlags, InetRequest, SocketId, StateFlags},
};

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
/// (both as that socket sees them): the kernel's answer by netlink, else
/// `/proc/net/tcp{,6}`'s.
pub fn socket_owner(local: SocketAddr, remote: SocketAddr) -> Option<u32> {
    match diag_owner(local, remote) {
        Ok(found) => found,
        Err(_) => proc_owner(local, remote),
    }
}

/// The owner of that socket from `/proc/net/tcp{,6}`.
pub fn proc_owner(local: SocketAddr, remote: SocketAddr) -> Option<u32> {
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().find_map(|file| {
        let table = std::fs::read_to_string(file).ok()?;
        owner_in(&table, local, remote)
    })
}

/// `-ENOENT` in a netlink error: no socket has those addresses.
const NO_SUCH_SOCKET: i32 = -libc::ENOENT;

/// The owner of that socket, asked of the kernel by `NETLINK_SOCK_DIAG`:
/// `Ok(None)` when the kernel says no such socket exists (it closed in
/// between), `Err` when netlink could not answer.
pub fn diag_owner(local: SocketAddr, remote: SocketAddr) -> std::io::Result<Option<u32>> {
    let (local, remote) = (canonical(local), canonical(remote));
    let family = match (local.ip(), remote.ip()) {
        (IpAddr::V4(_), IpAddr::V4(_)) => AF_INET,
        (IpAddr::V6(_), IpAddr::V6(_)) => AF_INET6,
        _ => return Ok(None),
    };
    // An IPv4 query also finds a dual-stack IPv6 socket connected over
    // IPv4: the kernel looks it up in the same table as IPv4 packets do.
    let request = InetRequest {
        family,
        protocol: IPPROTO_TCP,
        extensions: ExtensionFlags::empty(),
        states: StateFlags::all(),
        socket_id: SocketId {
            source_port: local.port(),
            destination_port: remote.port(),
            source_address: local.ip(),
            destination_address: remote.ip(),
            interface_id: 0,
            // INET_DIAG_NOCOOKIE: any socket with these addresses.
            cookie: [0xff; 8],
        },
    };
    let mut header = NetlinkHeader::default();
    // Not a dump: one socket, by its addresses.
    header.flags = NLM_F_REQUEST;
    let mut packet = NetlinkMessage::new(header, SockDiagMessage::InetRequest(request).into());
    packet.finalize();
    let mut sent = vec![0; packet.buffer_len()];
    packet.serialize(&mut sent);
    let socket = netlink_sys::Socket::new(netlink_sys::protocols::NETLINK_SOCK_DIAG)?;
    socket.send_to(&sent, &netlink_sys::SocketAddr::new(0, 0), 0)?;
    // The kernel answers a request for one socket while it takes it: the
    // answer is there when `send_to` returns, so the read need not wait.
    let mut answer = vec![0u8; 8192];
    let size = socket.recv(&mut &mut answer[..], libc::MSG_DONTWAIT)?;
    let message = NetlinkMessage::<SockDiagMessage>::deserialize(&answer[..size])
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?;
    match message.payload {
        NetlinkPayload::InnerMessage(SockDiagMessage::InetResponse(response)) => {
            let id = &response.header.socket_id;
            // A dual-stack socket answers with IPv4-mapped addresses.
            let same = canonical(SocketAddr::new(id.source_address, id.source_port)) == local
                && canonical(SocketAddr::new(id.destination_address, id.destination_port))
                    == remote;
            Ok(same.then_some(response.header.uid))
        }
        NetlinkPayload::Error(error) if error.code.map(|c| c.get()) == Some(NO_SUCH_SOCKET) => {
            Ok(None)
        }
        NetlinkPayload::Error(error) => Err(match error.code {
            Some(code) => std::io::Error::from_raw_os_error(-code.get()),
            None => std::io::Error::other("an acknowledgement, not an answer"),
        }),
        other => Err(std::io::Error::other(format!(
            "an unexpected netlink answer (type {})",
            other.message_type()
        ))),
    }
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
        // Both ways find it: netlink (the kernel answers here) and /proc.
        assert_eq!(diag_owner(from, server).unwrap(), Some(own_uid()));
        assert_eq!(proc_owner(from, server), Some(own_uid()));
        // A connection that does not exist has no owner.
        let nobody: SocketAddr = "127.0.0.1:1".parse().unwrap();
        assert_eq!(Peer::of(server, nobody).uid, None);
        assert_eq!(diag_owner(nobody, server).unwrap(), None);
    }

    /// A dual-stack IPv6 socket connected to an IPv4 listener: the
    /// listener sees an IPv4 peer, and netlink's IPv4 query finds it.
    #[test]
    fn a_dual_stack_peer_is_found() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let server = listener.local_addr().unwrap();
        let mapped: SocketAddr = format!("[::ffff:127.0.0.1]:{}", server.port())
            .parse()
            .unwrap();
        let Ok(_client) = std::net::TcpStream::connect(mapped) else {
            eprintln!("skipped: this machine has no IPv6 sockets");
            return;
        };
        let (_accepted, from) = listener.accept().unwrap();
        assert!(from.is_ipv4(), "{from}");
        assert_eq!(diag_owner(from, server).unwrap(), Some(own_uid()));
        assert_eq!(Peer::of(server, from).uid, Some(own_uid()));
    }

    /// Over IPv6 loopback, when the machine has it.
    #[test]
    fn the_owner_of_an_ipv6_loopback_connection_is_found() {
        let Ok(listener) = std::net::TcpListener::bind("[::1]:0") else {
            eprintln!("skipped: this machine has no IPv6 loopback");
            return;
        };
        let server = listener.local_addr().unwrap();
        let _client = std::net::TcpStream::connect(server).unwrap();
        let (_accepted, from) = listener.accept().unwrap();
        assert_eq!(diag_owner(from, server).unwrap(), Some(own_uid()));
        assert_eq!(proc_owner(from, server), Some(own_uid()));
    }
}
