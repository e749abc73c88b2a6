/*
 * Built-in scripted agents. `reference` plays the task's reference solution,
 * `flawed:NAME` one of its named wrong solutions, one step per turn; a
 * script that does not end in done or fail ends with an implied done.
 * `noop` declares done at once: an empty delivery every verifier must reject.
 * Held-back files are read from the host only when their step is played.
 */
#include "agent.h"

#include "engi/alloc.h"
#include "fsutil.h"

#include <string.h>

#define SCRIPT_FILE_CAP ((size_t)256 << 20)

struct scripted {
	const struct task_steps *steps;
	size_t next;
	char *file; /* content of the last written held-back file */
};

static int reference_start(struct agent *a, const struct agent_ctx *ctx, struct engi_error *err)
{
	struct scripted *s = a->priv;
	s->steps = &ctx->task->reference;
	return 0;
}

static int flawed_start(struct agent *a, const struct agent_ctx *ctx, struct engi_error *err)
{
	struct scripted *s = a->priv;
	const struct task_flawed *f =
	    ctx->variant ? task_find_flawed(ctx->task, ctx->variant) : NULL;
	if (!f)
		RAISE(err, ENGI_ENOTFOUND, "task '%s' has no flawed variant '%s'", ctx->task->id,
		      ctx->variant ? ctx->variant : "");
	s->steps = &f->steps;
	return 0;
}

static int scripted_next(struct agent *a, const struct observation *obs, struct agent_turn *turn,
			 struct engi_error *err)
{
	struct scripted *s = a->priv;
	engi_free(s->file);
	s->file = NULL;
	struct agent_action *act = &turn->actions[0];
	turn->n = 1;
	if (s->next >= s->steps->n) {
		act->kind = ACT_DONE;
		act->text = "script finished";
		return 0;
	}
	const struct task_step *st = &s->steps->v[s->next++];
	switch (st->kind) {
	case STEP_RUN:
		act->kind = ACT_RUN;
		act->text = st->text;
		break;
	case STEP_WRITE_TEXT:
		act->kind = ACT_WRITE;
		act->path = st->path;
		act->data = st->text;
		act->len = strlen(st->text);
		break;
	case STEP_WRITE_FILE: {
		size_t len;
		TRY(fs_read_file(st->host, SCRIPT_FILE_CAP, &s->file, &len, err));
		act->kind = ACT_WRITE;
		act->path = st->path;
		act->data = s->file;
		act->len = len;
		break;
	}
	case STEP_ASK:
		act->kind = ACT_ASK;
		act->text = st->text;
		break;
	case STEP_DONE:
		act->kind = ACT_DONE;
		act->text = st->text;
		break;
	case STEP_FAIL:
		act->kind = ACT_FAIL;
		act->text = st->text;
		break;
	}
	return 0;
}

static void scripted_stop(struct agent *a)
{
	struct scripted *s = a->priv;
	if (s) {
		engi_free(s->file);
		s->file = NULL;
	}
}

static int noop_next(struct agent *a, const struct observation *obs, struct agent_turn *turn,
		     struct engi_error *err)
{
	turn->n = 1;
	turn->actions[0].kind = ACT_DONE;
	turn->actions[0].text = "nothing to do";
	return 0;
}

static const struct agent_ops reference_ops = {
    .start = reference_start, .next = scripted_next, .stop = scripted_stop};
static const struct agent_ops flawed_ops = {
    .start = flawed_start, .next = scripted_next, .stop = scripted_stop};
static const struct agent_ops noop_ops = {.next = noop_next};

const struct agent_desc agent_reference = {
    .name = "reference",
    .summary = "plays the task's reference solution, one step per turn",
    .priv_size = sizeof(struct scripted),
    .ops = &reference_ops,
};

const struct agent_desc agent_flawed = {
    .name = "flawed",
    .summary = "flawed:NAME plays the task's named wrong solution",
    .priv_size = sizeof(struct scripted),
    .ops = &flawed_ops,
    .takes_variant = 1,
};

const struct agent_desc agent_noop = {
    .name = "noop",
    .summary = "declares done at once (an empty delivery)",
    .ops = &noop_ops,
};
