/* stream — libFuzzer target for the stream reader (lib/format/stream.c).
 *
 * Input: any bytes, read as a marple stream.  Besides "no crash, no leak, no
 * undefined behaviour", it checks the writer against the reader: every item
 * the reader accepts is written back with stream_write_*, and reading that
 * output again must give the same items with no error.
 *
 *   build/fuzz/stream -max_total_time=60 build/fuzz/corpus/stream tests/fuzz/corpus/stream
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stream.h"
#include "util.h"

/* A canonical dump of one item, to compare two reads. */
static void digest_mstr(FILE *d, struct mstr m)
{
	fprintf(d, "%zu:", m.len);
	fwrite(m.s, 1, m.len, d);
}

static void digest_fields(FILE *d, const struct field *f, size_t n)
{
	fprintf(d, " %zu", n);
	for (size_t i = 0; i < n; i++) {
		digest_mstr(d, f[i].key);
		digest_mstr(d, f[i].value);
	}
}

static void digest_json(FILE *d, json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	if (!s)
		abort();	/* jansson read it, so it must write it */
	fputs(s, d);
	free(s);
}

/* Read all of in; write accepted items to out (if not NULL) and their digest
 * to dig.  Returns the number of errors. */
static unsigned read_all(FILE *in, FILE *out, FILE *dig)
{
	struct stream_reader *r = stream_reader_new(in, "fuzz");
	enum stream_item it;
	unsigned errors = 0;

	while ((it = stream_reader_next(r)) != STREAM_EOF) {
		if (it == STREAM_ERROR) {
			if (!*stream_reader_error(r))
				abort();	/* every error has a reason */
			errors++;
			continue;
		}
		if (it == STREAM_HEADER || it == STREAM_TRAILER) {
			json_t *j = it == STREAM_HEADER ? stream_reader_header(r) : stream_reader_trailer(r);
			fprintf(dig, "%c", it == STREAM_HEADER ? 'H' : 'T');
			digest_json(dig, j);
			if (out && stream_write_json(out, j) < 0)
				abort();
			fputc('\n', dig);
			continue;
		}
		switch (stream_reader_datatype(r)) {
		case DATATYPE_STACK: {
			const struct stack_rec *s = stream_reader_stack(r);
			if (s->nframes < 1)
				abort();
			fprintf(dig, "S%llu %zu", (unsigned long long)s->weight, s->nframes);
			for (size_t i = 0; i < s->nframes; i++)
				digest_mstr(dig, s->frames[i]);
			if (out)
				stream_write_stack(out, s->weight, s->frames, s->nframes);
			break;
		}
		case DATATYPE_EVENT: {
			const struct event_rec *e = stream_reader_event(r);
			if (e->type.len == 0)
				abort();
			fprintf(dig, "E%llu ", (unsigned long long)e->time);
			digest_mstr(dig, e->type);
			digest_mstr(dig, e->track);
			digest_fields(dig, e->fields, e->nfields);
			if (out)
				stream_write_event(out, e->time, e->type, e->track, e->fields, e->nfields);
			break;
		}
		case DATATYPE_POINT: {
			const struct point_rec *p = stream_reader_point(r);
			fputc('P', dig);
			fwrite(&p->x, sizeof(p->x), 1, dig);
			fwrite(&p->y, sizeof(p->y), 1, dig);
			digest_mstr(dig, p->info);
			digest_fields(dig, p->fields, p->nfields);
			if (out)
				stream_write_point(out, p->x, p->y, p->info, p->fields, p->nfields);
			break;
		}
		default:
			abort();	/* a record outside any section */
		}
		fputc('\n', dig);
	}
	stream_reader_free(r);
	return errors;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *out = NULL, *d1 = NULL, *d2 = NULL;
	size_t outlen = 0, d1len = 0, d2len = 0;
	FILE *in, *o, *dig1, *dig2;

	in = fmemopen((void *)data, size ? size : 1, "r");
	if (!in)
		return 0;
	if (size == 0) {	/* fmemopen cannot open 0 bytes; read an empty stream */
		fclose(in);
		in = fopen("/dev/null", "r");
	}
	o = open_memstream(&out, &outlen);
	dig1 = open_memstream(&d1, &d1len);
	read_all(in, o, dig1);
	fclose(in);
	fclose(o);
	fclose(dig1);

	/* What we wrote reads back as the same items, without an error. */
	in = fmemopen(out, outlen ? outlen : 1, "r");
	if (outlen == 0) {
		fclose(in);
		in = fopen("/dev/null", "r");
	}
	dig2 = open_memstream(&d2, &d2len);
	unsigned errors = read_all(in, NULL, dig2);
	fclose(in);
	fclose(dig2);
	if (errors != 0 || d1len != d2len || memcmp(d1, d2, d1len) != 0) {
		fprintf(stderr, "stream fuzz: written stream reads back differently (%u errors)\n", errors);
		abort();
	}
	free(out);
	free(d1);
	free(d2);
	return 0;
}
