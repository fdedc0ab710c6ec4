/* kern-vm-helper: the small static program the VM lane runs inside boxes (and around them).
 *   chipinfo PATH                 GPIO_GET_CHIPINFO_IOCTL: prints "name=.. label=.. lines=N"
 *   i2c-rw PATH ADDR REG VALUE    SMBus byte write then read back through i2c-dev
 *   hog [MIB]                     allocates and touches memory until it is killed; with MIB,
 *                                 stops after MIB MiB and prints "hog: allocated MIB MiB"
 *   forkbomb N SECS               forks up to N sleepers, prints "forked=A failed=B errno=E"
 *   spin SECS                     busy loop for SECS of wall time, prints its CPU share
 *   time CMD [ARG...]             runs CMD, prints "elapsed_us=N rc=R" on stderr, exits with rc
 *   dwrite PATH MIB               writes MIB MiB to PATH with O_DIRECT in 64 KiB blocks, then
 *                                 fsync; prints "dwrite: MIB MiB in S s = R KiB/s"
 *   inet                          socket(AF_INET, SOCK_STREAM): prints "inet=ok" or
 *                                 "inet=ERRNAME" (exit 0 either way: the answer is the output)
 *   spi PATH                      one full-duplex SPI_IOC_MESSAGE(1) transfer of the 8 bytes
 *                                 "kern-spi" through spidev, into a zeroed buffer; prints
 *                                 "tx=HEX rx=HEX" (the lane's loop controller answers each byte
 *                                 XOR 0xa0 + the chip select: see modules/kern_spi_loop.c)
 * Exit 0 on success, 1 on a failed check, 2 on bad usage. Static: runs in a busybox box. */
#include <errno.h>
#include <fcntl.h>
#include <linux/gpio.h>
#include <linux/i2c-dev.h>
#include <linux/i2c.h>
#include <linux/spi/spidev.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int chipinfo(const char *path) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    printf("open %s: %s\n", path, strerror(errno));
    return 1;
  }
  struct gpiochip_info info;
  memset(&info, 0, sizeof info);
  if (ioctl(fd, GPIO_GET_CHIPINFO_IOCTL, &info) != 0) {
    printf("GPIO_GET_CHIPINFO_IOCTL %s: %s\n", path, strerror(errno));
    return 1;
  }
  printf("name=%s label=%s lines=%u\n", info.name, info.label, info.lines);
  return 0;
}

static int smbus(int fd, char rw, unsigned char reg, union i2c_smbus_data *data) {
  struct i2c_smbus_ioctl_data args = {.read_write = rw, .command = reg, .size = I2C_SMBUS_BYTE_DATA, .data = data};
  return ioctl(fd, I2C_SMBUS, &args);
}

static int i2c_rw(const char *path, const char *addr, const char *reg, const char *value) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    printf("open %s: %s\n", path, strerror(errno));
    return 1;
  }
  if (ioctl(fd, I2C_SLAVE, strtol(addr, NULL, 0)) != 0) {
    printf("I2C_SLAVE %s: %s\n", addr, strerror(errno));
    return 1;
  }
  unsigned char r = (unsigned char)strtol(reg, NULL, 0), v = (unsigned char)strtol(value, NULL, 0);
  union i2c_smbus_data out = {.byte = v}, in = {.byte = 0};
  if (smbus(fd, I2C_SMBUS_WRITE, r, &out) != 0 || smbus(fd, I2C_SMBUS_READ, r, &in) != 0) {
    printf("I2C_SMBUS: %s\n", strerror(errno));
    return 1;
  }
  printf("wrote=0x%02x read=0x%02x\n", v, in.byte);
  return in.byte == v ? 0 : 1;
}

static int hog(size_t limit_mib) {
  size_t total = 0;
  while (limit_mib == 0 || total < (limit_mib << 20)) {
    char *p = malloc(1 << 20);
    if (!p) continue;
    memset(p, 0xa5, 1 << 20);
    total += 1 << 20;
    if (total % (16 << 20) == 0) {
      fprintf(stderr, "hog: %zu MiB\n", total >> 20);
    }
  }
  printf("hog: allocated %zu MiB\n", total >> 20);
  return 0;
}

static int forkbomb(int n, int secs) {
  int forked = 0, failed = 0, err = 0;
  for (int i = 0; i < n; ++i) {
    pid_t p = fork();
    if (p == 0) {
      sleep((unsigned)secs);
      _exit(0);
    }
    if (p < 0) {
      ++failed;
      err = errno;
    } else {
      ++forked;
    }
  }
  printf("forked=%d failed=%d errno=%s\n", forked, failed, err ? strerrorname_np(err) : "0");
  return 0;
}

static int spin(double secs) {
  double start = now();
  volatile unsigned long x = 0;
  while (now() - start < secs) {
    for (int i = 0; i < 100000; ++i) x += (unsigned long)i;
  }
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
               (double)ru.ru_stime.tv_usec / 1e6;
  double wall = now() - start;
  printf("cpu=%.3f wall=%.3f share=%.3f\n", cpu, wall, cpu / wall);
  return 0;
}

static int timed(char **argv) {
  double start = now();
  pid_t p = fork();
  if (p == 0) {
    execvp(argv[0], argv);
    _exit(127);
  }
  int status = 0;
  while (waitpid(p, &status, 0) < 0 && errno == EINTR) {
  }
  int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  fprintf(stderr, "elapsed_us=%.0f rc=%d\n", (now() - start) * 1e6, rc);
  return rc;
}

/* O_DIRECT goes to the disk at once, so io.max's throttling shows in the elapsed time. */
static int dwrite(const char *path, int mib) {
  enum { block = 64 * 1024 };
  void *buf = NULL;
  if (mib <= 0 || posix_memalign(&buf, 4096, block) != 0) return 2;
  memset(buf, 0x6b, block);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0644);
  if (fd < 0) {
    fprintf(stderr, "dwrite: open %s: %s\n", path, strerror(errno));
    return 1;
  }
  double start = now();
  for (long done = 0; done < (long)mib * 1024 * 1024; done += block) {
    if (write(fd, buf, block) != block) {
      fprintf(stderr, "dwrite: write %s: %s\n", path, strerror(errno));
      return 1;
    }
  }
  if (fsync(fd) != 0) return 1;
  double secs = now() - start;
  close(fd);
  printf("dwrite: %d MiB in %.3f s = %.0f KiB/s\n", mib, secs, (double)mib * 1024 / secs);
  return 0;
}

static int inet(void) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0) {
    close(fd);
    printf("inet=ok\n");
  } else {
    printf("inet=%s\n", errno == EACCES ? "EACCES" : errno == EPERM ? "EPERM" : strerror(errno));
  }
  return 0;
}

static void hex(const char *tag, const unsigned char *b, size_t n) {
  printf("%s=", tag);
  for (size_t i = 0; i < n; ++i) printf("%02x", b[i]);
}

static int spi(const char *path) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    printf("open %s: %s\n", path, strerror(errno));
    return 1;
  }
  static const unsigned char tx[8] = {'k', 'e', 'r', 'n', '-', 's', 'p', 'i'};
  unsigned char rx[sizeof tx];
  memset(rx, 0, sizeof rx);
  struct spi_ioc_transfer xfer;
  memset(&xfer, 0, sizeof xfer);
  xfer.tx_buf = (unsigned long)tx;
  xfer.rx_buf = (unsigned long)rx;
  xfer.len = sizeof tx;
  if (ioctl(fd, SPI_IOC_MESSAGE(1), &xfer) != (int)sizeof tx) {
    printf("SPI_IOC_MESSAGE %s: %s\n", path, strerror(errno));
    return 1;
  }
  close(fd);
  hex("tx", tx, sizeof tx);
  hex(" rx", rx, sizeof rx);
  printf("\n");
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[1], "chipinfo") == 0) return chipinfo(argv[2]);
  if (argc >= 6 && strcmp(argv[1], "i2c-rw") == 0) return i2c_rw(argv[2], argv[3], argv[4], argv[5]);
  if (argc >= 2 && strcmp(argv[1], "hog") == 0) return hog(argc >= 3 ? (size_t)strtoul(argv[2], NULL, 10) : 0);
  if (argc >= 4 && strcmp(argv[1], "forkbomb") == 0) return forkbomb(atoi(argv[2]), atoi(argv[3]));
  if (argc >= 3 && strcmp(argv[1], "spin") == 0) return spin(atof(argv[2]));
  if (argc >= 3 && strcmp(argv[1], "time") == 0) return timed(argv + 2);
  if (argc >= 4 && strcmp(argv[1], "dwrite") == 0) return dwrite(argv[2], atoi(argv[3]));
  if (argc >= 2 && strcmp(argv[1], "inet") == 0) return inet();
  if (argc >= 3 && strcmp(argv[1], "spi") == 0) return spi(argv[2]);
  fprintf(stderr, "usage: kern-vm-helper chipinfo|i2c-rw|hog|forkbomb|spin|time|dwrite|inet|spi ...\n");
  return 2;
}
