// socketio-admin.js PORT HTPASSWD — a Socket.IO server instrumented for the Socket.IO Admin UI
// (@socket.io/admin-ui) with its basic authentication, as the Admin UI's README sets it up, and
// the Admin UI's own files (ui/dist) served from the same origin. The Admin UI signs in over the
// server's socket: the user name and password typed in its connection dialog go in the
// Socket.IO handshake (over the WebSocket with "WebSocket only"), checked by the admin-ui
// middleware against the bcrypt hash of HTPASSWD's one line (USER:HASH, as Apache's htpasswd -B
// writes it). It prints one line when the admin namespace accepts a connection, naming the user
// and the transport: the test's proof that the server signed the user in. Listens on 127.0.0.1
// only. Run by TestRealAppSocketIOAdmin (tests/realapp_socketio_test.go).
"use strict";
const fs = require("fs");
const http = require("http");
const path = require("path");
const { Server } = require("socket.io");
const { instrument } = require("@socket.io/admin-ui");

const [port, htpasswd] = process.argv.slice(2);
const [username, hash] = fs.readFileSync(htpasswd, "utf8").trim().split(":");
const ui = path.join(path.dirname(require.resolve("@socket.io/admin-ui/package.json")), "ui", "dist");
const types = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".png": "image/png", ".svg": "image/svg+xml" };

const server = http.createServer((req, res) => {
  const rel = path.normalize(decodeURIComponent(new URL(req.url, "http://x").pathname)).replace(/^\/+/, "") || "index.html";
  const file = path.join(ui, rel);
  if (!file.startsWith(ui + path.sep)) {
    res.writeHead(404).end();
    return;
  }
  fs.readFile(file, (err, body) => {
    if (err) {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("not found");
      return;
    }
    res.writeHead(200, { "Content-Type": types[path.extname(file)] || "application/octet-stream" }).end(body);
  });
});
const io = new Server(server);
// Every attempt, before the admin-ui middleware judges it (never the password).
io.of("/admin").use((socket, next) => {
  console.log(`admin namespace: handshake of ${JSON.stringify(socket.handshake.auth.username)} over ${socket.conn.transport.name}`);
  next();
});
instrument(io, { auth: { type: "basic", username, password: hash }, mode: "development" });
io.of("/admin").on("connection", (socket) => {
  console.log(`admin namespace: ${socket.handshake.auth.username} signed in over ${socket.conn.transport.name}`);
  socket.conn.on("upgrade", (t) => console.log(`admin namespace: upgraded to ${t.name}`));
});
server.listen(Number(port), "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${port}/`));
