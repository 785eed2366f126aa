/*
 * banned.h - functions that are easy to misuse become compile errors
 * (as in Git).  Use snprintf, nsr_buf or memcpy with explicit lengths.
 */
#ifndef NSR_BANNED_H
#define NSR_BANNED_H

#define NSR_BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) NSR_BANNED(strcpy)
#undef strcat
#define strcat(x, y) NSR_BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) NSR_BANNED(strncpy)
#undef sprintf
#define sprintf(...) NSR_BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) NSR_BANNED(vsprintf)
#undef strtok
#define strtok(x, y) NSR_BANNED(strtok)
#undef gets
#define gets(x) NSR_BANNED(gets)

#endif /* NSR_BANNED_H */
