"""Every channel the pipeline opens to a gateway is made here: plaintext, TLS, mutual TLS, a token.

One place decides the credentials so that no caller (the task client, the driver's lock channel,
the compactor, the CLI's reachability check) can forget the token or fall back to plaintext. The
token rides as per-call credentials (`authorization: Bearer <token>`, what the gateway's auth
reads), which gRPC attaches to every call on the channel, the health check included.
"""

from __future__ import annotations

from typing import Literal, Sequence, overload

import grpc

from pipeline.client.config import ClientConfig
from pipeline.client.security import ChannelSecurity

# Partition batches can be large (a 1000-partition answer with parameters is a few MB).
CHANNEL_OPTIONS: tuple[tuple[str, int], ...] = (("grpc.max_receive_message_length", 256 * 1024 * 1024),
                                                ("grpc.max_send_message_length", 256 * 1024 * 1024))


def channel_credentials(security: ChannelSecurity) -> grpc.ChannelCredentials | None:
    """The channel credentials `security` asks for; None for plaintext."""
    if not security.tls:
        return None
    credentials = grpc.ssl_channel_credentials(
        root_certificates=security.ca_pem or None,  # None: the system's trust roots
        private_key=security.key_pem or None, certificate_chain=security.cert_pem or None)
    if security.token:
        credentials = grpc.composite_channel_credentials(
            credentials, grpc.access_token_call_credentials(security.token))
    return credentials


@overload
def open_channel(config: ClientConfig, *, asynchronous: Literal[False] = False,
                 options: Sequence[tuple[str, int]] = CHANNEL_OPTIONS) -> grpc.Channel: ...


@overload
def open_channel(config: ClientConfig, *, asynchronous: Literal[True],
                 options: Sequence[tuple[str, int]] = CHANNEL_OPTIONS) -> grpc.aio.Channel: ...


def open_channel(config: ClientConfig, *, asynchronous: bool = False,
                 options: Sequence[tuple[str, int]] = CHANNEL_OPTIONS) -> grpc.Channel | grpc.aio.Channel:
    """A channel to `config.address` with `config.security`: a blocking one, or a grpc.aio one
    (`asynchronous=True`, to be made and used inside a running event loop)."""
    credentials = channel_credentials(config.security)
    opts = list(options)
    if asynchronous:
        if credentials is None:
            return grpc.aio.insecure_channel(config.address, options=opts)
        return grpc.aio.secure_channel(config.address, credentials, options=opts)
    if credentials is None:
        return grpc.insecure_channel(config.address, options=opts)
    return grpc.secure_channel(config.address, credentials, options=opts)
