// labkit class hub: HTTPS and plain HTTP on one port (loaded into configurable-http-proxy with
// `node --import <this file> configurable-http-proxy ...`; labkit.hub.tls.proxy_command).
//
// The proxy's HTTPS server (configurable-http-proxy's proxyServer, the only https.Server it
// makes) is not listened on directly: a plain TCP server listens on its address instead and
// looks at each connection's first byte. A TLS ClientHello starts with 0x16 (RFC 8446 §5.1,
// ContentType handshake): the connection goes to the HTTPS server, the same socket, so the
// proxy still sees the student's address (X-Forwarded-For, the hub's login throttle). Anything
// else is plain HTTP: it gets 301 to the same host and port over https://, or the class CA
// certificate at /labkit-ca.crt (so a student's browser can install it before trusting the hub).
// Only Node's public API (https.Server#listen, net, http) is used; labkit.hub.tls checks the
// proxy's version before loading this.
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import net from "node:net";

const here = new URL(import.meta.url);
const caFile = here.searchParams.get("ca") || "";
const FIRST_BYTE_TIMEOUT_MS = 10000;
const HOST = /^[A-Za-z0-9.\-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$/;

const redirect = http.createServer((req, res) => {
  if (caFile && req.url === "/labkit-ca.crt") {
    res.writeHead(200, { "Content-Type": "application/x-x509-ca-cert",
                         "Content-Disposition": "attachment; filename=labkit-ca.crt" });
    res.end(fs.readFileSync(caFile));
    return;
  }
  const host = req.headers.host || "";
  if (!HOST.test(host)) {
    res.writeHead(400, { "Content-Type": "text/plain; charset=utf-8" });
    res.end("https:// 주소로 접속하세요.\n");
    return;
  }
  res.writeHead(301, { Location: `https://${host}${req.url}`, "Content-Length": "0" });
  res.end();
});

https.Server.prototype.listen = function (...args) {
  const tlsServer = this;
  const front = net.createServer((socket) => {
    socket.setTimeout(FIRST_BYTE_TIMEOUT_MS, () => socket.destroy());
    socket.once("data", (chunk) => {
      socket.setTimeout(0);
      socket.pause();
      socket.unshift(chunk);
      (chunk[0] === 0x16 ? tlsServer : redirect).emit("connection", socket);
      process.nextTick(() => socket.resume());
    });
    socket.on("error", () => socket.destroy());
  });
  front.on("error", (err) => tlsServer.emit("error", err));
  front.on("listening", () => tlsServer.emit("listening"));
  tlsServer.close = (callback) => front.close(callback);
  tlsServer.address = () => front.address();
  front.listen(...args);
  return tlsServer;
};
