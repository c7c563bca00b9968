/* eventread.c — reading event sections for the event renderers. */
#include "eventread.h"

#include <stdio.h>
#include <string.h>

#include "timed.h"

/* Does er read sections of datatype dt (header hdr)? */
static int reads(const struct eventread *er, enum datatype dt, json_t *hdr)
{
	return dt == DATATYPE_EVENT || (dt == DATATYPE_POINT && er->on_point) ||
	       (dt == DATATYPE_STACK && er->on_stack && timed_role(hdr) == TIMED_STACKS);
}

/* One operand; -1 at a section of another datatype. */
static int read_one(struct eventread *er, const char *path)
{
	FILE *f = marple_open_input(path);
	struct stream_reader *r = stream_reader_new(f, marple_input_name(path));
	enum stream_item it;
	int rc = 0;

	while ((it = stream_reader_next(r)) != STREAM_EOF) {
		if (it == STREAM_ERROR) {
			if (++er->bad <= 10)
				stream_reader_warn(r);
		} else if (it == STREAM_HEADER) {
			enum datatype dt = stream_reader_datatype(r);
			if (!reads(er, dt, stream_reader_header(r))) {
				marple_warn_at(stream_reader_name(r), stream_reader_line(r),
					"section of datatype \"%s\": %s draws events%s only%s",
					stream_datatype_name(dt), marple_progname, er->on_point ? " and points" : "",
					er->on_stack ? " (and the stacks of timed sections)" : "");
				rc = -1;
				break;
			}
			er->file = stream_reader_name(r);
			er->line = stream_reader_line(r);
			if (er->on_section && er->on_section(er, stream_reader_header(r), dt) < 0) {
				rc = -1;
				break;
			}
			er->sections++;
			int64_t s = stream_header_int(stream_reader_header(r), "start_ns", -1);
			if (!er->have_t0 && s >= 0) {
				er->t0 = (uint64_t)s;
				er->have_t0 = 1;
			}
		} else if (it == STREAM_TRAILER) {
			int64_t e = stream_header_int(stream_reader_trailer(r), "end_ns", -1);
			if (e > 0 && (uint64_t)e > er->end)
				er->end = (uint64_t)e;
			if (stream_reader_datatype(r) == DATATYPE_STACK && er->on_stack_trailer)
				er->on_stack_trailer(er, stream_reader_trailer(r));
		} else if (it == STREAM_RECORD && stream_reader_datatype(r) == DATATYPE_STACK) {
			er->file = stream_reader_name(r);
			er->line = stream_reader_line(r);
			er->on_stack(er, stream_reader_stack(r));
		} else if (it == STREAM_RECORD && stream_reader_datatype(r) == DATATYPE_POINT) {
			er->file = stream_reader_name(r);
			er->line = stream_reader_line(r);
			er->on_point(er, stream_reader_point(r));
			er->events++;
		} else if (it == STREAM_RECORD) {
			const struct event_rec *e = stream_reader_event(r);
			er->file = stream_reader_name(r);
			er->line = stream_reader_line(r);
			if (!er->have_t0) {
				er->t0 = e->time;
				er->have_t0 = 1;
			}
			if (e->time > er->end)
				er->end = e->time;
			er->on_event(er, e);
			er->events++;
		}
	}
	const char *why = stream_reader_unusable(r);	/* marple-format(5): nothing written */
	if (why && rc == 0) {
		marple_warn_at(stream_reader_name(r), 0, "%s", why);
		rc = -1;
	}
	stream_reader_free(r);
	if (f != stdin)
		fclose(f);
	return rc;
}

int eventread_files(struct eventread *er, int n, char **paths)
{
	for (int i = 0; i < (n ? n : 1); i++)
		if (read_one(er, n ? paths[i] : "-") < 0)
			return -1;
	return 0;
}

int eventread_check(const struct eventread *er, int n, char **paths)
{
	if (er->sections && er->events)
		return 0;
	if (er->bad)
		marple_warn("%llu bad lines skipped", (unsigned long long)er->bad);
	marple_warn_at(marple_operands_name(n, paths), 0, "%s",
		er->sections ? "no events in the input" : "no marple event section in the input");
	return -1;
}

int eventread_finish(const struct eventread *er, struct outfile *of, int n, char **paths)
{
	if (eventread_check(er, n, paths) < 0) {
		marple_outfile_abort(of);
		return EXIT_DATA;
	}
	if (er->bad) {
		/* a picture missing what the bad lines held is not written: a
		 * file under the name asked for means the whole input is in it */
		marple_warn("%llu bad lines: nothing written", (unsigned long long)er->bad);
		marple_outfile_abort(of);
		return EXIT_DATA;
	}
	if (marple_outfile_commit(of) < 0)
		return EXIT_DATA;
	return EXIT_OK;
}

int eventread_track_cpu(struct mstr track, uint64_t *cpu)
{
	if (track.len < 4 || memcmp(track.s, "cpu", 3) != 0)
		return -1;
	return marple_parse_u64_span(track.s + 3, track.len - 3, cpu);
}
