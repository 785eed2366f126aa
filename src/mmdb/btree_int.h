/*
 * btree_int.h - node and catalog layouts private to the B+tree layer
 * (published in nsr_mmdb(5)).  Big-endian integers.
 *
 * Node page (type MMDB_PT_LEAF or MMDB_PT_INTERIOR), after the common
 * 24-byte page header (type at offset 16):
 *   off size meaning
 *    24    2 number of cells n
 *    26    2 start of the cell content area (0 means 32768)
 *    28    4 interior: leftmost child page; leaf: 0
 *    32  2*n slot array: offset of cell i, cells in key order
 *    ...     free space, then cells packed towards the end of the page
 * Leaf cell:     2 key length k, 2 value length v, k key bytes, v value
 * Interior cell: 2 key length k, 4 child page, k key bytes; the child
 *                holds keys >= this key and < the next cell's key; the
 *                leftmost child holds keys < the first cell's key.
 *
 * Catalog in page 0:
 *   128    2 number of trees
 *   132 32*i entry i: 28 bytes name (NUL padded), 4 bytes root page
 */
#ifndef NSR_MMDB_BTREE_INT_H
#define NSR_MMDB_BTREE_INT_H

#define N_TYPE 16
#define N_NCELLS 24
#define N_CSTART 26
#define N_CHILD0 28
#define N_SLOTS 32

#define CAT_COUNT 128
#define CAT_ENTRIES 132
#define CAT_ENTRY_SIZE 32
#define CAT_NAME_SIZE 28

#endif /* NSR_MMDB_BTREE_INT_H */
