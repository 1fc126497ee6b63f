// uchardet (Mozilla's universal charset detector) for Swift: guesses the character set of a legacy subtitle file.
#ifndef ORB_CUCHARDET_SHIM_H
#define ORB_CUCHARDET_SHIM_H
#include <uchardet.h>
#endif
