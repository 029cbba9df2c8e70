//! One way to wrap a store: [`Wrapped`] is a [`Store`] around another, each
//! of its calls made through a hook ([`Around`]): a timer ([`Metered`]),
//! retries ([`Retrying`]), statistics kept beside the store ([`Tracked`]),
//! a test's gate. The trait, [`Around`] (a pass-through for every call)
//! and `Wrapped`'s forwarding are written by one macro from one list of
//! the store's methods ([`store_api!`], invoked in `lib.rs`): adding a
//! method to [`Store`] touches that list and the two backends, nothing
//! else.
//!
//! [`Store`]: crate::Store
//! [`Metered`]: crate::Metered
//! [`Retrying`]: crate::Retrying
//! [`Tracked`]: crate::Tracked

use std::future::Future;
use std::pin::Pin;

/// A call's future, as [`Around::around`] runs it.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What makes one store call: each run a fresh attempt on the store
/// underneath (every call is safe to make twice: reads, and writes by id).
pub type Run<'a, T> = dyn Fn() -> BoxFuture<'a, crate::Result<T>> + Send + Sync + 'a;

/// One call through a hook: which method, and the label its timing goes
/// under (the method's name; a query's ranking for [`Op::Query`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call {
    pub op: crate::Op,
    pub label: &'static str,
}

/// Writes [`Store`](crate::Store), [`Op`](crate::Op),
/// [`Around`](crate::Around) and `Wrapped`'s `Store` impl from one list:
/// the trait's synchronous methods (each a hook in `Around`, passed through
/// by default), then its calls (`Variant: async fn …;`, with a label
/// expression for the metric in parentheses where it is not the name).
macro_rules! store_api {
    (
        $(#[$trait_attr:meta])*
        pub trait Store {
            $(
                $(#[$sync_attr:meta])*
                fn $sync:ident(&self $(, $sync_arg:ident: $sync_ty:ty)*) $(-> $sync_ret:ty)?;
            )*
        }
        calls {
            $(
                $(#[$attr:meta])*
                $op:ident $(($label:expr))?:
                async fn $name:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty;
            )*
        }
    ) => {
        $(#[$trait_attr])*
        #[async_trait]
        pub trait Store: Send + Sync + 'static {
            $( $(#[$sync_attr])* fn $sync(&self $(, $sync_arg: $sync_ty)*) $(-> $sync_ret)?; )*
            $( $(#[$attr])* async fn $name(&self $(, $arg: $ty)*) -> $ret; )*
        }

        /// The calls of [`Store`], as a hook sees them.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Op {
            $( $op, )*
        }

        impl Op {
            /// The method's name.
            pub fn name(self) -> &'static str {
                match self {
                    $( Self::$op => stringify!($name), )*
                }
            }
        }

        /// What a [`Wrapped`] store does around each call of the store it
        /// wraps. Every method passes through by default.
        #[async_trait]
        pub trait Around: Send + Sync + 'static {
            /// Makes `call`: `run` makes it on the store underneath, as
            /// many times as the hook likes (once by default).
            async fn around<'a, T: Send + 'a>(
                &'a self,
                call: $crate::wrap::Call,
                run: &'a $crate::wrap::Run<'a, T>,
            ) -> Result<T> {
                let _ = call;
                run().await
            }
            $(
                $(#[$sync_attr])*
                #[allow(mismatched_lifetime_syntaxes)] // `&str` borrows from `inner`, as `'s`
                fn $sync<'s>(&'s self, inner: &'s Arc<dyn Store> $(, $sync_arg: $sync_ty)*) $(-> $sync_ret)? {
                    inner.$sync($($sync_arg),*)
                }
            )*
        }

        /// A store around another, each call through its hook `H`.
        pub struct Wrapped<H> {
            inner: Arc<dyn Store>,
            hook: H,
        }

        impl<H: Around> Wrapped<H> {
            /// `inner`, its calls made through `hook`.
            pub fn with(inner: Arc<dyn Store>, hook: H) -> Self {
                Self { inner, hook }
            }

            /// The hook, for what it offers beside the store.
            pub fn hook(&self) -> &H {
                &self.hook
            }
        }

        #[async_trait]
        impl<H: Around> Store for Wrapped<H> {
            $(
                fn $sync(&self $(, $sync_arg: $sync_ty)*) $(-> $sync_ret)? {
                    self.hook.$sync(&self.inner $(, $sync_arg)*)
                }
            )*
            $(
                #[allow(clippy::clone_on_copy, clippy::redundant_clone)]
                async fn $name(&self $(, $arg: $ty)*) -> $ret {
                    let label: &'static str = $crate::wrap::label!(Op::$op $(, $label)?);
                    let inner = &self.inner;
                    // Each run a fresh attempt: owned arguments cloned,
                    // borrowed ones lent again.
                    let run = move || inner.$name($(<$ty as Clone>::clone(&$arg)),*);
                    self.hook.around($crate::wrap::Call { op: Op::$op, label }, &run).await
                }
            )*
        }
    };
}

/// A call's label: its method's name, or the expression given.
macro_rules! label {
    ($op:expr) => {
        $op.name()
    };
    ($op:expr, $label:expr) => {
        $label
    };
}

pub(crate) use {label, store_api};
