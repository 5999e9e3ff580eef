// What libkiln exports: the library is built with hidden visibility, and the classes and
// functions of the public headers are marked KILN_API so that they, and only they, are
// visible to programs that link it.
#pragma once

#define KILN_API __attribute__((visibility("default")))
