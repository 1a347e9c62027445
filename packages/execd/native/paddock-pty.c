/*
 * paddock-pty: runs a program on a new pseudo-terminal for execd, which cannot open one itself
 * (Node has no openpty or ioctl without a native module).
 *
 *   paddock-pty ROWS COLS PROGRAM [ARG...]
 *
 * stdin is the terminal's input and stdout its output, as raw bytes. Each line "ROWS COLS" on
 * fd 3 resizes the terminal (the kernel then sends SIGWINCH to the program). Exits with the
 * program's exit code, or 128 + the signal that ended it. SIGTERM or SIGHUP hang the terminal up.
 *
 * Built static (glibc's forkpty needs nothing at run time), so it runs in any image.
 */
#include <errno.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define CONTROL_SIZE 64

static volatile sig_atomic_t hang_up;

static void on_hang_up(int signal_number) {
  (void)signal_number;
  hang_up = 1;
}

static int parse_size(const char *text, unsigned short *size) {
  char *end;
  long value = strtol(text, &end, 10);
  if (*end != '\0' || value < 1 || value > 10000) return -1;
  *size = (unsigned short)value;
  return 0;
}

/* Writes all of buffer, waiting out EAGAIN/EINTR; -1 when the reader has gone. */
static int write_all(int fd, const char *buffer, ssize_t length) {
  while (length > 0) {
    ssize_t written = write(fd, buffer, (size_t)length);
    if (written < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return -1;
    }
    buffer += written;
    length -= written;
  }
  return 0;
}

/* Applies every complete "ROWS COLS" line buffered from the control fd. */
static void apply_resizes(int master, char *control, size_t *used) {
  char *line = control;
  char *newline;
  while ((newline = memchr(line, '\n', *used - (size_t)(line - control))) != NULL) {
    *newline = '\0';
    struct winsize size = {0};
    char *space = strchr(line, ' ');
    if (space != NULL) {
      *space = '\0';
      if (parse_size(line, &size.ws_row) == 0 && parse_size(space + 1, &size.ws_col) == 0)
        ioctl(master, TIOCSWINSZ, &size);
    }
    line = newline + 1;
  }
  size_t rest = *used - (size_t)(line - control);
  memmove(control, line, rest);
  *used = rest == CONTROL_SIZE ? 0 : rest; /* a line longer than the buffer is dropped */
}

int main(int argc, char **argv) {
  struct winsize size = {0};
  if (argc < 4 || parse_size(argv[1], &size.ws_row) != 0 || parse_size(argv[2], &size.ws_col) != 0) {
    fprintf(stderr, "usage: paddock-pty ROWS COLS PROGRAM [ARG...]\n");
    return 2;
  }
  int master;
  pid_t child = forkpty(&master, NULL, NULL, &size);
  if (child < 0) {
    perror("paddock-pty: forkpty");
    return 1;
  }
  if (child == 0) {
    close(3);
    execvp(argv[3], &argv[3]);
    fprintf(stderr, "paddock-pty: %s: %s\r\n", argv[3], strerror(errno));
    _exit(127);
  }

  struct sigaction action = {0};
  action.sa_handler = on_hang_up;
  sigaction(SIGTERM, &action, NULL);
  sigaction(SIGHUP, &action, NULL);
  signal(SIGPIPE, SIG_IGN);

  struct pollfd fds[3] = {
      {.fd = master, .events = POLLIN},
      {.fd = STDIN_FILENO, .events = POLLIN},
      {.fd = 3, .events = POLLIN},
  };
  char buffer[16384];
  char control[CONTROL_SIZE];
  size_t control_used = 0;
  while (!hang_up) {
    if (poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t length = read(master, buffer, sizeof buffer);
      /* EIO: every process holding the terminal has gone. */
      if (length <= 0 && !(length < 0 && errno == EINTR)) break;
      if (length > 0 && write_all(STDOUT_FILENO, buffer, length) < 0) break;
    }
    /* Resizes before input: a resize sent before some keystrokes must apply before a program
     * those keystrokes start (`stty size`) asks for the size, even when both arrive together. */
    if (fds[2].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t length = read(3, control + control_used, sizeof control - control_used);
      if (length > 0) {
        control_used += (size_t)length;
        apply_resizes(master, control, &control_used);
      } else if (length == 0 || errno != EINTR) {
        fds[2].fd = -1;
      }
    }
    if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t length = read(STDIN_FILENO, buffer, sizeof buffer);
      if (length > 0) {
        write_all(master, buffer, length);
      } else if (length == 0 || errno != EINTR) {
        fds[1].fd = -1; /* input closed: the program keeps its terminal until it exits */
      }
    }
  }

  /* Hang up: the session's processes get SIGHUP as from a closed terminal, then SIGKILL. */
  close(master);
  kill(-child, SIGHUP);
  int status;
  for (int waited = 0; waitpid(child, &status, WNOHANG) == 0; waited++) {
    if (waited == 20) kill(-child, SIGKILL);
    if (waited > 20) {
      waitpid(child, &status, 0);
      break;
    }
    usleep(50000);
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}
