// Splitting one string into words as a POSIX shell does (IEEE Std 1003.1, Shell Command Language,
// 2.2 Quoting and 2.6.5 Field Splitting), without running anything: for argument strings a user
// copies from a shell command ("--model llama3-70b --tp 8", a Megatron-LM launch line).
//
// Rules: blanks (space, tab, newline) separate words (the string is one command's arguments: a
// newline is a blank, not the end of a command); '...' keeps everything literally; "..."
// keeps everything but \ before $ ` " \ or a newline (the backslash is dropped; a backslash and
// newline vanish); an unquoted \ keeps the next character (a backslash and newline, a line
// continuation, vanish); '' and "" make an empty word; a # at the start of a word begins a comment
// to the end of the line.
//
// What a shell would expand or interpret is refused rather than passed on literally, so that a
// word is never silently different from what the shell would give: an unquoted or double-quoted
// $ or ` (parameters, commands, arithmetic), and unquoted operators | & ; < > ( ). Glob characters
// (* ? [) stay literal, as a shell leaves a pattern that matches no file.
#ifndef PPSIM_BASE_SHELL_WORDS_H_
#define PPSIM_BASE_SHELL_WORDS_H_

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ppsim {

// The words of `text`, in order. InvalidInput naming the character (1-based, counting bytes) for
// an unterminated quote, a trailing backslash, an expansion or an operator, e.g. "unterminated
// double quote opened at character 12; close it with \"" or "character 5: '$' would be expanded
// by a shell; write the value itself (or quote it: '$X')". *words is cleared first.
Status SplitShellWords(std::string_view text, std::vector<std::string>* words);

}  // namespace ppsim

#endif  // PPSIM_BASE_SHELL_WORDS_H_
