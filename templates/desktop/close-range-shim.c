/*
 * Preloaded into every process of the image (/etc/ld.so.preload).
 *
 * gVisor (at least release 20240729, the one Debian 12 ships) answers close_range(2) with EINVAL
 * when its upper bound is above INT_MAX, where Linux accepts any bound and closes up to the last
 * open descriptor. GLib (g_spawn*, so xfce4-session, xfce4-panel, Thunar, terminals) calls
 * close_range(fd, ~0U, ...) before every exec and treats that EINVAL as fatal: no program of the
 * desktop could start another. Descriptors never exceed INT_MAX, so clamping the bound keeps
 * Linux's meaning on every kernel.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <sys/syscall.h>
#include <unistd.h>

int close_range(unsigned int first, unsigned int last, int flags) {
  if (first > (unsigned int)INT_MAX) return 0; /* no descriptor can be that high */
  if (last > (unsigned int)INT_MAX) last = INT_MAX;
  return (int)syscall(SYS_close_range, first, last, flags);
}
