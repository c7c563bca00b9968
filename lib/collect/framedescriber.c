/* framedescriber.c — what each frame name of a section stands for (see framedescriber.h). */
#include "framedescriber.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "hashtab.h"
#include "sourceframes.h"
#include "stream.h"
#include "syms.h"
#include "util.h"

/* What a frame name stands for: the trailer's "frames" (marple-format(5)). */
struct frame_desc {
	const char *kind;		/* "native", "inline", "kernel", "python", "jit", "marker" */
	const char *file;		/* NULL: none */
	const char *build_id;		/* NULL or "": none */
	uint64_t offset;		/* where the function starts in file */
	int has_offset;
	int line;			/* Python, inline: the line; 0 none */
	const char *source;		/* native: its source file (DWARF, Go table); NULL none */
	int source_line;		/* there, at the frame's address */
};

struct framedescriber {
	int with_addresses;		/* unnamed native frames keep their offset */
	struct hashtab *strings;	/* files, build ids, sources: interned, so
					 * that equal strings are one pointer */
	struct hashtab *described;	/* frame keys described so far (their index in
					 * desc): a name, or a name, NUL and its tag */
	struct frame_desc *desc;
	size_t desc_cap;
	struct hashtab *first_code;	/* 8 bytes of a name's hash -> the identity tag
					 * of the first code of that name the run met:
					 * kept across sections (~60 bytes a name), so
					 * that a name without tag is the same code in
					 * every section of a run */
	struct {			/* names described, by pointer: most frames are */
		const char *name;	/* the same interned strings again, told apart */
		const char *source;	/* here without hashing them; a symbol's name */
		unsigned line;		/* is its file's, a source file a DWARF or Go */
		int inlined;		/* table's: the pointers, the line and whether */
		uint32_t tag;		/* it is inlined there tell its tag */
	} seen[1024];
	char *scratch;			/* framedescriber_key's */
	size_t scratch_cap;
};

struct framedescriber *framedescriber_new(int with_addresses)
{
	struct framedescriber *fd = marple_calloc(1, sizeof(*fd));
	fd->with_addresses = with_addresses;
	fd->strings = hashtab_new();
	fd->described = hashtab_new();
	fd->first_code = hashtab_new();
	return fd;
}

void framedescriber_free(struct framedescriber *fd)
{
	if (!fd)
		return;
	hashtab_free(fd->strings);
	hashtab_free(fd->described);
	hashtab_free(fd->first_code);
	free(fd->desc);
	free(fd->scratch);
	free(fd);
}

void framedescriber_next_section(struct framedescriber *fd)
{
	hashtab_free(fd->strings);
	fd->strings = hashtab_new();
	hashtab_free(fd->described);
	fd->described = hashtab_new();
	free(fd->desc);
	fd->desc = NULL;
	fd->desc_cap = 0;
	memset(fd->seen, 0, sizeof(fd->seen));
}

void framedescriber_forget_names(struct framedescriber *fd)
{
	memset(fd->seen, 0, sizeof(fd->seen));
}

static const char *intern(struct framedescriber *fd, const char *s)
{
	return s ? hashtab_add(fd->strings, s, strlen(s), 0, 0)->key : NULL;
}

static size_t seen_slot(const char *name, unsigned line)
{
	return (((uintptr_t)name >> 4) + line * 31u) % 1024;
}

/* The seen slot of name at source:line (inlined there or not), and whether
 * it holds it (its tag). */
static size_t seen_find(const struct framedescriber *fd, const char *name, const char *source, unsigned line,
			int inlined, int *found)
{
	size_t slot = seen_slot(name, line);

	*found = fd->seen[slot].name == name && fd->seen[slot].source == source && fd->seen[slot].line == line &&
		 fd->seen[slot].inlined == inlined;
	return slot;
}

static void seen_set(struct framedescriber *fd, size_t slot, const char *name, const char *source, unsigned line,
		     int inlined, uint32_t tag)
{
	fd->seen[slot].name = name;
	fd->seen[slot].source = source;
	fd->seen[slot].line = line;
	fd->seen[slot].inlined = inlined;
	fd->seen[slot].tag = tag;
}

/* The described slot of key[0..len), and whether it was added just now. */
static struct frame_desc *desc_slot(struct framedescriber *fd, const char *key, size_t len, int *added)
{
	size_t before = hashtab_size(fd->described);
	size_t i = hashtab_index(fd->described, hashtab_add(fd->described, key, len, 0, 0));
	*added = i >= before;
	if (*added) {
		fd->desc = marple_grow(fd->desc, &fd->desc_cap, i + 1, sizeof(*fd->desc));
		memset(&fd->desc[i], 0, sizeof(fd->desc[i]));
	}
	return &fd->desc[i];
}

/* The description slot of name if it has none yet (the first description of
 * a name wins), else NULL. */
static struct frame_desc *undescribed(struct framedescriber *fd, const char *name)
{
	int added;

	seen_set(fd, seen_slot(name, 0), name, NULL, 0, 0, 0);
	struct frame_desc *d = desc_slot(fd, name, strlen(name), &added);
	return added || !d->kind ? d : NULL;	/* no kind: kept for the run's first code */
}

/* Describe name as kind code of file (a string that lives as long as fd)
 * unless it is described. */
static void describe_new(struct framedescriber *fd, const char *name, const char *kind, const char *file)
{
	int found;

	seen_find(fd, name, NULL, 0, 0, &found);
	if (found)
		return;
	struct frame_desc *d = undescribed(fd, name);
	if (d) {
		d->kind = kind;
		d->file = file;
	}
}

void framedescriber_marker(struct framedescriber *fd, const char *name)
{
	describe_new(fd, name, "marker", NULL);
}

void framedescriber_kernel(struct framedescriber *fd, const char *name)
{
	describe_new(fd, name, "kernel", "[kernel.kallsyms]");
}

void framedescriber_describe(struct framedescriber *fd, const char *name, const char *kind, const char *file,
			     int line)
{
	struct frame_desc *d = undescribed(fd, name);
	if (!d)
		return;
	d->kind = kind;
	d->file = intern(fd, file);
	d->line = line;
}

/* What a user frame named name is (fr: what the symbolizer answered for its
 * address; at: where its source says it is, or NULL): native code of a
 * file, JIT code named by a perf map, or (no mapping) a marker. */
static struct frame_desc user_desc(struct framedescriber *fd, const char *name, const struct syms_frame *fr,
				   const struct sourceframes_frame *at)
{
	struct frame_desc d = { .kind = "marker" };
	int named = fr->name != NULL;

	if (!fr->module)
		return d;	/* no mapping: [unknown] */
	if (fr->kind == SYMS_KIND_JIT && named) {
		d.kind = "jit";
		d.file = fr->path[0] == '[' ? NULL : intern(fd, fr->path);
		return d;
	}
	if (!named && (fr->path[0] == '[' || strcmp(name, "[unknown]") == 0))
		return d;	/* [unknown] in anonymous memory, [vdso]: no file to name */
	d.kind = "native";
	/* copies: the cache lets go of an unused file's strings */
	d.file = intern(fd, fr->path);
	d.build_id = intern(fd, fr->build_id);
	if (named || fd->with_addresses) {
		d.offset = fr->file_offset - (named ? fr->sym_offset : 0);
		d.has_offset = 1;
	}
	if (at && at->file && strcmp(at->file, "??") != 0) {
		d.source = intern(fd, at->file);
		d.source_line = (int)at->line;
	}
	return d;
}

static uint32_t fnv1a(uint32_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return (h ^ 0xff) * 16777619u;	/* ends each string: "ab","c" is not "a","bc" */
}

/* The identity tag of code described as d: a hash of all it says, so that
 * the same code has the same tag in every section and capture. */
static uint32_t identity_tag(const struct frame_desc *d)
{
	char nums[48];

	snprintf(nums, sizeof(nums), "%d:%" PRIu64 ":%d", d->has_offset, d->offset, d->line);
	uint32_t h = fnv1a(fnv1a(fnv1a(fnv1a(2166136261u, d->kind), d->file), d->build_id), nums);
	if (d->source) {	/* a native frame's line is its address's: the line is its identity */
		snprintf(nums, sizeof(nums), "%d", d->source_line);
		h = fnv1a(fnv1a(h, d->source), nums);
	}
	return h ? h : 1;
}

/* Do a and b describe the same code?  Files and build ids are interned
 * (intern): equal strings are one pointer. */
static int same_code(const struct frame_desc *a, const struct frame_desc *b)
{
	return strcmp(a->kind, b->kind) == 0 && a->file == b->file && a->build_id == b->build_id &&
	       a->has_offset == b->has_offset && a->offset == b->offset && a->line == b->line &&
	       a->source == b->source && a->source_line == b->source_line;
}

/* Is tag the first code of name the run met (this one, if none yet)? */
static int run_first_code(struct framedescriber *fd, const char *name, uint32_t tag)
{
	uint64_t h = hashtab_hash(name, strlen(name));
	const struct hashtab_entry *e = hashtab_find(fd->first_code, &h, sizeof(h));

	if (!e)
		e = hashtab_add(fd->first_code, &h, sizeof(h), tag, 0);
	return e->count[0] == tag;
}

/* Describe name as d: 0 when the name stands for d (the first code of that
 * name the run met, described under the name), else d's identity tag, the
 * frame described under the name and the tag (marple-format(5), Frame
 * identity). */
static uint32_t describe_as(struct framedescriber *fd, const char *name, const struct frame_desc *d)
{
	size_t len;
	int added;
	struct frame_desc *first = desc_slot(fd, name, strlen(name), &added);

	if (first->kind && same_code(first, d))
		return 0;
	uint32_t tag = identity_tag(d);
	if (!first->kind && run_first_code(fd, name, tag)) {
		*first = *d;
		return 0;
	}
	const char *key = framedescriber_key(fd, name, tag, &len);
	struct frame_desc *other = desc_slot(fd, key, len, &added);
	if (added)
		*other = *d;
	return tag;
}

/* Describe a user frame named name (fr: the symbolizer's answer; at: its
 * source, or NULL); returns its identity tag.  A symbol's name is its
 * file's string, and at's file its DWARF's or Go table's: seen by pointers
 * and line, it is the same code (other names, such as "[module]", are
 * looked up each time). */
uint32_t framedescriber_user(struct framedescriber *fd, const char *name, const struct syms_frame *fr,
			      const struct sourceframes_frame *at)
{
	int named = fr->name != NULL, found;
	const char *source = at ? at->file : NULL;
	unsigned line = at ? at->line : 0;
	size_t slot = seen_find(fd, name, source, line, 0, &found);

	if (named && found)
		return fd->seen[slot].tag;
	struct frame_desc d = user_desc(fd, name, fr, at);
	uint32_t tag = describe_as(fd, name, &d);
	if (named)
		seen_set(fd, slot, name, source, line, 0, tag);
	return tag;
}

uint32_t framedescriber_inline(struct framedescriber *fd, const char *name, const char *file, unsigned line)
{
	int found;
	size_t slot = seen_find(fd, name, file, line, 1, &found);

	if (found)
		return fd->seen[slot].tag;
	struct frame_desc d = { .kind = "inline", .file = intern(fd, file), .line = (int)line };
	uint32_t tag = describe_as(fd, name, &d);
	seen_set(fd, slot, name, file, line, 1, tag);
	return tag;
}

/* A frame's key in frame_ids and described: its name, and for a tagged
 * frame a NUL and the tag after it (stream.h's stream_frame_key), in
 * fd->scratch. */
const char *framedescriber_key(struct framedescriber *fd, const char *name, uint32_t tag, size_t *len)
{
	*len = strlen(name);
	if (!tag)
		return name;
	fd->scratch = marple_grow(fd->scratch, &fd->scratch_cap, *len + STREAM_TAG_KEY_LEN, 1);
	memcpy(fd->scratch, name, *len);
	fd->scratch[*len] = 0;
	memcpy(fd->scratch + *len + 1, &tag, sizeof(tag));
	*len += STREAM_TAG_KEY_LEN;
	return fd->scratch;
}

void framedescriber_trailer_add(const struct framedescriber *fd, json_t *trailer)
{
	json_t *all = json_object(), *ids = json_object();
	size_t n = hashtab_size(fd->described);

	for (size_t i = 0; i < n; i++) {
		const struct hashtab_entry *e = hashtab_at(fd->described, i);
		const struct frame_desc *d = &fd->desc[i];
		if (!d->kind)	/* a name only other code of had in the section (tagged) */
			continue;
		json_t *o = json_object();
		const char *kind = d->kind;
		json_object_set_new(o, "kind", json_string(kind));
		json_t *file = d->file ? stream_json_string_bytes(d->file, strlen(d->file)) : NULL;
		/* a file's build id once, in "build_ids", not in each of its frames */
		if (file && d->build_id && d->build_id[0])
			json_object_set_new(ids, json_string_value(file), json_string(d->build_id));
		if (file && strcmp(kind, "kernel") != 0)	/* kernel: [kernel.kallsyms], said by the kind */
			json_object_set_new(o, "file", file);
		else
			json_decref(file);
		if (d->has_offset)
			json_object_set_new(o, "offset", json_integer((json_int_t)d->offset));
		if (d->line > 0)
			json_object_set_new(o, "line", json_integer(d->line));
		if (d->source)
			json_object_set_new(o, "source", stream_json_string_bytes(d->source, strlen(d->source)));
		if (d->source && d->source_line > 0)
			json_object_set_new(o, "source_line", json_integer(d->source_line));
		size_t name_len;
		uint32_t tag = stream_frame_key_split(e->key, e->len, &name_len);
		char *name = escape_dup(e->key, name_len), *key = name;
		if (tag)	/* as the records write it */
			key = marple_asprintf("%s#%08" PRIx32, name, tag);
		json_object_set_new(all, key, o);
		if (key != name)
			free(key);
		free(name);
	}
	json_object_set_new(trailer, "frames", all);
	json_object_set_new(trailer, "build_ids", ids);
}
