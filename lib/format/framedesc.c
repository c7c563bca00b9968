/* framedesc.c — frame descriptions from stack trailers (see framedesc.h). */
#include "framedesc.h"

#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "hashtab.h"
#include "stream.h"
#include "util.h"

struct framedesc {
	struct hashtab *names;		/* decoded name -> index in frames */
	struct framedesc_frame *frames;
	size_t cap, ndescribed;
	struct hashtab *strings;	/* kinds, files, build ids: kept once */
};

struct framedesc *framedesc_new(void)
{
	struct framedesc *fd = marple_calloc(1, sizeof(*fd));
	fd->names = hashtab_new();
	fd->strings = hashtab_new();
	return fd;
}

void framedesc_free(struct framedesc *fd)
{
	if (!fd)
		return;
	hashtab_free(fd->names);
	hashtab_free(fd->strings);
	free(fd->frames);
	free(fd);
}

static const char *keep(struct framedesc *fd, const char *s, size_t len)
{
	return hashtab_add(fd->strings, s, len, 0, 0)->key;
}

/* A JSON string member, decoded from %XX (as record names are), or NULL. */
static const char *member(struct framedesc *fd, json_t *o, const char *key, size_t *len)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_string(v))
		return NULL;
	size_t n = json_string_length(v);
	char *s = marple_malloc(n + 1);
	memcpy(s, json_string_value(v), n + 1);
	long dl = escape_decode_inplace(s, n, NULL);
	const char *kept = dl < 0 ? NULL : keep(fd, s, (size_t)dl);
	if (len)
		*len = dl < 0 ? 0 : (size_t)dl;
	free(s);
	return kept;
}

/* The entry of name, added empty (kind NULL: not described) on first sight. */
static struct framedesc_frame *slot(struct framedesc *fd, const char *name, size_t len)
{
	size_t before = hashtab_size(fd->names);
	size_t i = hashtab_index(fd->names, hashtab_add(fd->names, name, len, 0, 0));
	if (i >= before) {
		fd->frames = marple_grow(fd->frames, &fd->cap, i + 1, sizeof(*fd->frames));
		memset(&fd->frames[i], 0, sizeof(fd->frames[i]));
	}
	return &fd->frames[i];
}

void framedesc_add(struct framedesc *fd, json_t *trailer)
{
	json_t *frames = json_object_get(trailer, "frames"), *ids = json_object_get(trailer, "build_ids"), *o;
	const char *key;

	if (!json_is_object(frames))
		return;
	json_object_foreach(frames, key, o) {
		if (!json_is_object(o))
			continue;
		/* "name#89abcdef": the name's code of that tag (stream.h) */
		size_t n = strlen(key);
		uint32_t tag = stream_tag_of_text(key, n);
		char *name = marple_malloc(n + 1);
		memcpy(name, key, n + 1);
		long dl = escape_decode_inplace(name, tag ? n - STREAM_TAG_TEXT_LEN : n, NULL);
		if (dl < 0) {
			free(name);
			continue;
		}
		if (tag) {	/* as stream_frame_key has it */
			name[dl] = 0;
			memcpy(name + dl + 1, &tag, sizeof(tag));
			dl += STREAM_TAG_KEY_LEN;
		}
		struct framedesc_frame *f = slot(fd, name, (size_t)dl);
		free(name);
		if (f->kind)
			continue;	/* described by an earlier trailer */
		fd->ndescribed++;
		f->kind = member(fd, o, "kind", NULL);
		if (!f->kind)
			f->kind = "native";
		f->file = member(fd, o, "file", &f->file_len);
		if (f->file && !f->file_len)
			f->file = NULL;		/* "": no file */
		f->build_id = member(fd, o, "build_id", NULL);
		json_t *file = json_object_get(o, "file");
		if (!f->build_id && json_is_string(file) && json_is_object(ids))	/* the file's, said once */
			f->build_id = member(fd, ids, json_string_value(file), NULL);
		if (f->build_id && !f->build_id[0])
			f->build_id = NULL;
		if (!f->file && strcmp(f->kind, "kernel") == 0) {
			f->file = "[kernel.kallsyms]";
			f->file_len = strlen(f->file);
		}
		json_t *v = json_object_get(o, "offset");
		if (json_is_integer(v) && json_integer_value(v) >= 0) {
			f->offset = (uint64_t)json_integer_value(v);
			f->has_offset = 1;
		}
		v = json_object_get(o, "line");
		if (json_is_integer(v) && json_integer_value(v) > 0)
			f->line = json_integer_value(v);
		f->source = member(fd, o, "source", &f->source_len);
		v = json_object_get(o, "source_line");
		if (f->source && json_is_integer(v) && json_integer_value(v) > 0)
			f->source_line = json_integer_value(v);
	}
}

const struct framedesc_frame *framedesc_get(struct framedesc *fd, const char *s, size_t len)
{
	if (!fd || !fd->ndescribed)
		return NULL;
	/* hashtab finds by adding: a name asked about is kept, undescribed */
	const struct framedesc_frame *f = slot(fd, s, len);
	return f->kind ? f : NULL;
}

size_t framedesc_count(const struct framedesc *fd)
{
	return fd ? fd->ndescribed : 0;
}

int framedesc_source(const struct framedesc_frame *f, const char **file, size_t *len, int64_t *line)
{
	if (f && f->file && (framedesc_is_script(f) || framedesc_is(f, "inline")))
		*file = f->file, *len = f->file_len, *line = f->line;
	else if (f && f->source && f->source_len && !framedesc_is(f, "marker"))
		*file = f->source, *len = f->source_len, *line = f->source_line;
	else
		return 0;
	return 1;
}

int framedesc_is(const struct framedesc_frame *f, const char *k)
{
	return f && strcmp(f->kind, k) == 0;
}

int framedesc_is_script(const struct framedesc_frame *f)
{
	return framedesc_is(f, "python") || framedesc_is(f, "php") || framedesc_is(f, "perl") ||
	       framedesc_is(f, "ruby");
}

size_t framedesc_function_len(const struct framedesc_frame *f, const char *s, size_t len)
{
	if (!framedesc_is_script(f) || !f->file || len < 2 || s[len - 1] != ')')
		return len;
	const char *open = memrchr(s, '(', len);
	if (open && open > s + 1 && open[-1] == ' ' && (size_t)(s + len - open) > f->file_len + 1 &&
	    memcmp(open + 1, f->file, f->file_len) == 0)
		return (size_t)(open - 1 - s);
	return len;
}
