# Shared by the desktop entrypoints (paddock-desktop, paddock-browser): starts the pieces of the
# desktop in order and keeps each one running. Sourced by bash; it logs to stderr, which is the
# sandbox's log.

supervisors=() # the supervisors' process ids, in the order they were started

log() { printf '%s %s: %s\n' "$(date -u +%H:%M:%S)" "${0##*/}" "$*" >&2; }

# supervise NAME COMMAND...: runs COMMAND in the background and starts it again a second after
# it exits, logging each exit. On TERM it stops COMMAND and waits for it to finish.
supervise() {
  local name=$1
  shift
  (
    child=
    trap '[ -n "$child" ] && kill "$child" 2>/dev/null && wait "$child"; exit 0' TERM INT
    while :; do
      "$@" &
      child=$!
      wait "$child"
      log "$name exited with status $?; starting it again in 1 s"
      sleep 1
    done
  ) &
  supervisors+=($!)
  log "$name started"
}

# wait_for NAME SECONDS CHECK...: runs CHECK every 0.1 s until it succeeds; logs when it gives up.
wait_for() {
  local name=$1 tries=$(($2 * 10))
  shift 2
  for ((i = 0; i < tries; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  log "$name did not come up within $((tries / 10)) s; going on"
  return 1
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
window_manager_running() { xprop -root _NET_SUPPORTING_WM_CHECK | grep -q 'window id'; }

# start_display: session bus -> Xvfb -> Xfce (xfwm4 first), each started once the one before it
# answers. Returns non-zero when a piece did not come up in time (it goes on all the same).
start_display() {
  local display=${DISPLAY:-:1} status=0
  local bus=${DBUS_SESSION_BUS_ADDRESS:-unix:path=/run/paddock/session-bus}
  export DISPLAY=$display DBUS_SESSION_BUS_ADDRESS=$bus
  rm -f "/tmp/.X${display#:}-lock" "/tmp/.X11-unix/X${display#:}"
  mkdir -p /tmp/.X11-unix /run/paddock && chmod 1777 /tmp/.X11-unix

  if [[ $bus == unix:path=* ]]; then
    rm -f "${bus#unix:path=}"
    supervise dbus-daemon dbus-daemon --session --nofork --nopidfile --address="$bus"
    wait_for dbus-daemon 10 test -S "${bus#unix:path=}" || status=1
  fi

  # -noreset: by default the X server resets when its last client leaves (the readiness probe,
  # say), and clients connecting during the reset fail.
  supervise Xvfb Xvfb "$display" -screen 0 "${PADDOCK_DESKTOP_SIZE:-1280x800}x24" \
    -nolisten tcp -noreset -dpi 96
  wait_for Xvfb 30 xdpyinfo || status=1

  # Xfce's pieces run directly rather than under xfce4-session, whose start-up waits for each
  # client to register with it and gave up on xfwm4 only after its timeout (about 8 s). Run
  # directly, each is kept running by its supervisor instead.
  unset SESSION_MANAGER
  supervise xfwm4 xfwm4 --sm-client-disable
  wait_for xfwm4 30 window_manager_running || status=1
  supervise xfsettingsd xfsettingsd --sm-client-disable
  supervise xfce4-panel xfce4-panel --sm-client-disable
  supervise xfdesktop xfdesktop --sm-client-disable
  return $status
}

# start_viewer: x11vnc (5900), then websockify serving noVNC (6080) once x11vnc answers, so noVNC
# answering means the display can be watched. Returns non-zero when a piece did not come up.
start_viewer() {
  local status=0
  supervise x11vnc x11vnc -display "$DISPLAY" -rfbport 5900 -forever -shared -nopw -quiet -noxdamage
  wait_for x11vnc 30 port_open 5900 || status=1

  supervise websockify websockify --web /usr/share/novnc 6080 127.0.0.1:5900
  wait_for websockify 30 port_open 6080 || status=1
  return $status
}

# stop_all: stops what was started, the last first (a browser before the X server it draws on).
stop_all() {
  local i
  for ((i = ${#supervisors[@]} - 1; i >= 0; i--)); do
    kill "${supervisors[i]}" 2>/dev/null
    wait "${supervisors[i]}"
  done
}

# finish_prepare: the end of `--prepare`, which runs once while the image is built: the
# entrypoint has started everything once, so that first-start work (Xfce copying its defaults
# into its settings one call at a time, about 8 s under gVisor's ptrace platform; a browser
# creating its profile) is done then and kept in the image rather than redone in every sandbox.
# This stops everything and removes what only a running desktop needs.
finish_prepare() {
  sleep 3 # Xfce's settings daemon writes its files a moment after the last change
  local settings
  settings=$(pidof xfconfd) && kill $settings && wait_for "xfconfd's exit" 10 sh -c "! kill -0 $settings"
  stop_all
  find /tmp -mindepth 1 -delete
  rm -rf /run/paddock /root/.cache/sessions /root/.config/xfce4/xfconf/xfce-perchannel-xml/*.new
}

# keep_running: waits on the supervisors, which never end; stops them all on TERM or INT.
keep_running() {
  trap 'log "stopping"; stop_all; exit 0' TERM INT
  wait
}
