/* The live applications that may take more executors, in the order they
 * registered: what a FIFO placement pass walks.  With 1,000 applications
 * whose executors are all placed, walking every application read two cache
 * lines of each, scattered over the heap, for a pass that then placed one
 * executor; that walk was most of what placing a new application cost
 * (docs/DESIGN.md "Placement").  Kept where an application's state, executor
 * limit, core cap or live executors change. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef struct App App;

typedef struct AppsWanting {
        App *head, *tail;
        uint64_t next_seq;       /* the registration order given to the next app */
} AppsWanting;

/* Gives a new application its place in the registration order. */
void apps_wanting_number(AppsWanting *q, App *a);
/* Whether a may take another executor now: live, below its core cap and
 * below its executor limit (the test cluster_schedule_app() starts with). */
bool app_wants_more(const App *a);
/* Puts a on the list or takes it off, as app_wants_more() says: after any
 * change to what it depends on. */
void apps_wanting_update(AppsWanting *q, App *a);
/* Takes a off the list: before it is freed. */
void apps_wanting_remove(AppsWanting *q, App *a);
/* The first application on the list registered after the one numbered seq. */
App *apps_wanting_after(const AppsWanting *q, uint64_t seq);
/* Whether the list holds exactly the apps of the list from apps_head (linked
 * by next) that want more, in their order (the sanitizer build's check). */
bool apps_wanting_matches(const AppsWanting *q, App *apps_head);
