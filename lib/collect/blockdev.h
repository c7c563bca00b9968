/* blockdev.h — the disk a collector's -d names.
 *
 * The block tracepoints see a request's gendisk (disk->major,
 * disk->first_minor), never the partition it was meant for: a filter on a
 * partition's own number (loop0p1 is 259:0, its disk loop0 7:0) matches
 * nothing.  So -d climbs from a partition to its disk, here, for every
 * collector that has it (disklat, diskblockrq).
 */
#ifndef MARPLE_BLOCKDEV_H
#define MARPLE_BLOCKDEV_H

/* The disk of dev ("vda", "/dev/vda", "loop0p1" or MAJOR:MINOR, a partition
 * meaning its whole disk) as *major:*minor; *partition (unless NULL)
 * says whether dev was a partition.  A MAJOR:MINOR the kernel does not list
 * is taken as given.
 * Exits 2 when dev is no name; -1 with a message said when there is no
 * such device (the collector exits 1), else 0. */
int blockdev_disk(const char *dev, unsigned *major, unsigned *minor, int *partition);

#endif
