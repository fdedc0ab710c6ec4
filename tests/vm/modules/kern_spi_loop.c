// SPDX-License-Identifier: GPL-2.0-only
/*
 * kern_spi_loop: a software SPI controller for kern's VM lane (tests/vm). Debian's kernels ship
 * no SPI controller simulator, and the lane must show that a box given /dev/spidevB.C can run a
 * real transfer through it.
 *
 * The controller has no wire: every transfer is answered at once, each byte received being the
 * byte sent at the same position XOR (0xa0 + the chip select). Chip select 0 answers tx ^ 0xa0,
 * chip select 1 answers tx ^ 0xa1; a transfer without a tx buffer receives 0xa0 + the chip
 * select in every byte. A test thereby tells a real transfer from a buffer left as it was, and
 * sees which device answered. Words are 8 bits; all four clock modes are accepted.
 *
 * Two devices sit on it, chip selects 0 and 1, named "dh2228fv", an entry of spidev's id table
 * (spidev refuses to bind to its own bare name), so spidev gives each a node /dev/spidevB.C, B
 * being the bus number the SPI core hands out. The controller hangs under the platform device
 * /sys/devices/platform/kern_spi_loop, where guest_init.sh looks for the nodes.
 *
 * Written for kern's tests; no hardware is touched, and nothing here depends on the CPU
 * architecture.
 */
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/spi/spi.h>
#include <linux/string.h>

#define KERN_SPI_LOOP_NAME "kern_spi_loop"
#define KERN_SPI_LOOP_DEVICES 2
#define KERN_SPI_LOOP_MODALIAS "dh2228fv"
#define KERN_SPI_LOOP_KEY 0xa0

static struct platform_device *loop_parent;
static struct spi_controller *loop_ctlr;

/* Called by the SPI core's message pump for each transfer; 0 = done, nothing to wait for. */
static int loop_transfer_one(struct spi_controller *ctlr, struct spi_device *spi,
			     struct spi_transfer *xfer)
{
	const u8 *tx = xfer->tx_buf;
	u8 *rx = xfer->rx_buf;
	u8 key = KERN_SPI_LOOP_KEY + spi_get_chipselect(spi, 0);
	unsigned int i;

	if (rx) {
		for (i = 0; i < xfer->len; i++)
			rx[i] = (tx ? tx[i] : 0) ^ key;
	}
	return 0;
}

static int __init loop_init(void)
{
	struct spi_board_info info = {
		.max_speed_hz = 1000000,
		.mode = SPI_MODE_0,
	};
	int err, cs;

	loop_parent = platform_device_register_simple(KERN_SPI_LOOP_NAME, PLATFORM_DEVID_NONE, NULL, 0);
	if (IS_ERR(loop_parent))
		return PTR_ERR(loop_parent);

	loop_ctlr = spi_alloc_host(&loop_parent->dev, 0);
	if (!loop_ctlr) {
		err = -ENOMEM;
		goto out_parent;
	}
	loop_ctlr->bus_num = -1; /* the next free number */
	loop_ctlr->num_chipselect = KERN_SPI_LOOP_DEVICES;
	loop_ctlr->mode_bits = SPI_CPOL | SPI_CPHA | SPI_CS_HIGH;
	loop_ctlr->bits_per_word_mask = SPI_BPW_MASK(8);
	loop_ctlr->max_speed_hz = 10000000;
	loop_ctlr->transfer_one = loop_transfer_one;

	err = spi_register_controller(loop_ctlr);
	if (err) {
		spi_controller_put(loop_ctlr);
		goto out_parent;
	}

	strscpy(info.modalias, KERN_SPI_LOOP_MODALIAS, sizeof(info.modalias));
	for (cs = 0; cs < KERN_SPI_LOOP_DEVICES; cs++) {
		info.chip_select = cs;
		if (!spi_new_device(loop_ctlr, &info)) {
			pr_err(KERN_SPI_LOOP_NAME ": no device at chip select %d\n", cs);
			err = -ENODEV;
			goto out_ctlr;
		}
	}
	pr_info(KERN_SPI_LOOP_NAME ": SPI bus %d, %d devices \"%s\"\n", loop_ctlr->bus_num,
		KERN_SPI_LOOP_DEVICES, KERN_SPI_LOOP_MODALIAS);
	return 0;

out_ctlr:
	spi_unregister_controller(loop_ctlr); /* also removes its devices and drops the controller */
out_parent:
	platform_device_unregister(loop_parent);
	return err;
}

static void __exit loop_exit(void)
{
	spi_unregister_controller(loop_ctlr);
	platform_device_unregister(loop_parent);
}

module_init(loop_init);
module_exit(loop_exit);

MODULE_DESCRIPTION("SPI controller answering every transfer with its tx bytes XOR (0xa0 + chip select), for kern's VM lane");
MODULE_LICENSE("GPL");
