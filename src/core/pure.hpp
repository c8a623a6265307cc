// Guard included by every header under src/core: the core is plain C++17 and
// must never see a PostgreSQL header. Include core headers before PostgreSQL's.
#pragma once

#if defined(PG_VERSION_NUM) || defined(POSTGRES_H) || defined(C_H)
#error "src/core is pure C++17: include it before any PostgreSQL header"
#endif
