/* stackfilter.c — what a stack is, from its frames (stackfilter.h). */
#include <string.h>

#include "stackfilter.h"
#include "util.h"

/* frame f is name, or name with the kernel annotation "_[k]" */
static int frame_is(struct mstr f, const char *name)
{
	size_t n = strlen(name);
	return (f.len == n || (f.len == n + 4 && memcmp(f.s + n, "_[k]", 4) == 0)) && memcmp(f.s, name, n) == 0;
}

int stackfilter_kernel_thread(const struct mstr *frames, size_t n)
{
	/* ret_from_fork_asm (6.x) or ret_from_fork (older), then kthread */
	size_t i = 1;
	if (i < n && frame_is(frames[i], "ret_from_fork_asm"))
		i++;
	if (i < n && frame_is(frames[i], "ret_from_fork"))
		i++;
	return i > 1 && i < n && frame_is(frames[i], "kthread");
}

size_t stackfilter_line_at(const char *s, size_t len)
{
	size_t i = len;

	if (len < 6 || s[len - 1] != ')')
		return 0;
	for (i = len - 1; i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9'; i--)
		;
	if (i == len - 1 || i < 2 || s[i - 1] != ':')
		return 0;
	const char *open = memmem(s, i, " (", 2);	/* NAME (FILE: */
	return open && open + 2 < s + i - 1 ? i - 1 : 0;
}

size_t stackfilter_strip_lines(const char *stack, size_t len, char **out, size_t *cap)
{
	size_t o = 0, start = 0;

	*out = marple_grow(*out, cap, len + 1, 1);
	for (size_t i = 0; i <= len; i++) {
		if (i < len && stack[i] != ';')
			continue;
		size_t flen = i - start, at = stackfilter_line_at(stack + start, flen);
		memcpy(*out + o, stack + start, at ? at : flen);
		o += at ? at : flen;
		if (at)
			(*out)[o++] = ')';
		if (i < len)
			(*out)[o++] = ';';
		start = i + 1;
	}
	return o;
}

void stackfilter_count_add(struct stackfilter_count *c, struct mstr comm, double weight)
{
	size_t len = strlen(c->comms);

	c->stacks++;
	c->weight += weight;
	/* each comm once */
	for (const char *p = c->comms; (p = memmem(p, len - (size_t)(p - c->comms), comm.s, comm.len)); p++)
		if ((p == c->comms || p[-1] == ' ') && (p[comm.len] == ',' || p[comm.len] == 0))
			return;
	if (len + comm.len + 3 >= sizeof(c->comms)) {
		c->more = 1;
		return;
	}
	for (size_t i = 0; i < comm.len; i++)	/* for a message: no control bytes */
		c->comms[len + (len ? 2 : 0) + i] = (unsigned char)comm.s[i] < 0x20 ? '?' : comm.s[i];
	if (len)
		memcpy(c->comms + len, ", ", 2);
	c->comms[len + (len ? 2 : 0) + comm.len] = 0;
}

void stackfilter_count_say(const struct stackfilter_count *c, const char *unit, const char *how)
{
	if (!c->stacks)
		return;
	marple_warn("left out %llu stack%s of kernel threads (%.0f %s: %s%s); %s", (unsigned long long)c->stacks,
		    c->stacks == 1 ? "" : "s", c->weight, unit ? unit : "samples", c->comms, c->more ? ", ..." : "", how);
}
