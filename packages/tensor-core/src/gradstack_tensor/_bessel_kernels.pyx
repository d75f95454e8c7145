# cython: language_level=3, cdivision=True, boundscheck=False, wraparound=False
"""Kernels of ``torch.special``'s Bessel functions, orthogonal polynomials, ``erfcx`` and
the regularized incomplete gamma functions, each one pass in C over float32 or float64
arrays, with torch's algorithms (Note [Bessel kernels follow torch's arithmetic]).
This module holds the Bessel functions and the entry points, :func:`unary` and
:func:`binary`, of all; the polynomials are ``_polynomial_kernels.pyx``'s, ``erfcx`` and
the incomplete gamma functions ``_erfcx_igamma_kernels.pyx``'s, and the C the three share
(the generic math calls, the FMA copies, the loops) is ``_special_c.pxd``'s.

The unary functions (``UNARY``: ``airy_ai``, ``bessel_j0`` ... ``i0``, ``i0e``, ``i1``,
``i1e``, ``erfcx``) take one array; the binary ones (``BINARY``: the polynomials of ``x``
and degree ``n``, ``igamma`` and ``igammac``) take two arrays of one dtype, of one shape
or one of them of one element.  The ops of ``_op_table.py`` reach them through
``_ufuncs.pyx`` (``_special_unary``, ``_special_binary``), which promotes, broadcasts and
takes the other dtypes.  Arguments are checked, and threads set, by ``_kernels.pyx``'s
shared code.

Examples
--------
>>> import numpy as np
>>> from gradstack_tensor._bessel_kernels import binary, unary
>>> unary("bessel_j0", np.array([0.0, 1.0])).round(6)
array([1.      , 0.765198])
>>> binary("chebyshev_polynomial_t", np.array([0.5]), np.array([2.0]))
array([-0.5])
"""


cimport numpy as cnp
from cython.parallel cimport prange

from ._erfcx_igamma_kernels cimport erfcx_range, igamma_range
from ._kernels cimport _check_input, kernel_avx2, kernel_block_size, kernel_threads
from ._polynomial_kernels cimport polynomial_range
from ._special_c cimport binary_range_t, unary_range_t

from ._erfcx_igamma_kernels import ERFCX, IGAMMA
from ._polynomial_kernels import POLYNOMIALS

cnp.import_array()

__all__ = ["BINARY", "UNARY", "binary", "unary"]

# Note [Bessel kernels follow torch's arithmetic]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch 2.13 computes these functions (aten/src/ATen/native/Math.h) as C++ templates of
# the element type, so a float32 tensor's values are float arithmetic throughout, except
# where a double literal or an integer makes an expression double (erfcx's Chebyshev
# fits, the log of modified_bessel_k0, most of igamma's float code).  The functions below
# are written once, as macros of the type ``T``, and made for float and double; the
# usual arithmetic conversions of C are those of C++, and the type-generic ``gs_bk_*``
# math calls (C11 ``_Generic``) pick ``cosf`` for a float as ``std::cos`` does, so the
# float32 results are torch's float32 results, not the float64 values rounded.
#   - The Bessel functions of the first and second kind (``bessel_j0/j1/y0/y1``), Airy's
#     Ai and the modified Bessel functions (``modified_bessel_i0/i1/k0/k1``, the scaled
#     ``k0/k1``) are Cephes' rational and Chebyshev approximations (coefficients from
#     the Cephes Math Library, j0.c, j1.c, airy.c, i0.c, i1.c, k0.c, k1.c; Stephen L.
#     Moshier, BSD-licensed).  ``i0``, ``i0e``, ``i1`` and ``i1e`` are torch's other
#     copies of i0 and i1 (``calc_i0`` ...; float i1 and i1e keep only the 17 and 7 last
#     Chebyshev terms, as torch's float tables do).
#   - ``erfcx`` is Steven G. Johnson's (the Faddeeva package, MIT-licensed): a
#     continued fraction above 50 and, below, 100 Chebyshev fits of degree 6 in
#     ``y = 400 / (4 + |x|)`` (the table GS_BK_ERFCX_Y100, 7 coefficients a fit).
#   - ``igamma`` and ``igammac`` are SciPy's (``gammainc``/``gammaincc``: Cephes' igam
#     with the uniform asymptotic expansion of DLMF 8.12 near ``a = x``, coefficient
#     table GS_BK_IGAM_D, and Boost's Lanczos sum for the prefactor).
#   - The polynomials are their three-term recurrences, with torch's shortcuts: 0 for a
#     negative degree (a NaN or infinite degree converts to the most negative integer,
#     as a float-to-int64 conversion does on x86), the values at the ends of the
#     interval, ``cos(n acos x)`` forms for large degrees inside it, and the Hermite
#     polynomials NaN above degree 128 (float32) or 512 (float64).
#
# Note [Bessel kernels contract as torch's]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch's CPU kernels run from its AVX2 or AVX-512 build on a machine that has them, and
# that build lets the compiler fuse a multiply and an add into one FMA instruction (one
# rounding): ``(x + x) * q - p``, the Horner steps.  So the functions are compiled twice,
# a default copy and a copy with ``target("avx2,fma")`` where GCC contracts the same
# expressions; a call takes the second when ``kernel_avx2()`` (the CPU has AVX2 and
# FMA), as torch takes its AVX2/AVX-512 kernels.  The two copies differ in the last bit
# of some values.  torch's own kernels are not all of one kind, and where GCC contracted
# them differently the code says so (found by comparing both copies with torch on dense
# grids, each exact where it is taken): torch's float64 ``erfcx`` and the ``1 - igammac``
# branch of ``igamma`` (``x > 1``, ``x > a``) have no fused multiply-adds, so the FMA
# copy takes the default copy's functions there; ``k0`` and the scaled ``k0`` below 2 fuse
# ``c - log(x / 2) * i0(x)`` as ``fma(-log, i0, c)``, written out.  Measured against
# torch 2.13 (AVX-512) the FMA copy then gives torch's bits for every function, float32
# and float64, but float32 ``igamma`` at a few points of its series where the result is
# tiny (2 of 6,000 random pairs, around 1e-19 and 1e-26, ~1e-4 relative).  NaN ``x``
# gives NaN in every polynomial, where torch's loop returns an uninitialised value.
#
# Note [Bessel kernels' threads]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# An element costs 20 ns (i0) to several microseconds (igamma's series, a polynomial of
# high degree), so a loop takes a second thread from 2048 elements, as the special and
# activation kernels do.

cdef extern from *:
    """
    /* ---- coefficient tables (sources: Note [Bessel kernels follow torch's arithmetic]) */

    /* ---- coefficient tables (sources: Note [Bessel kernels follow torch's arithmetic]) */

    #define GS_BK_AIRY_AN \
        3.46538101525629032477e-01, 1.20075952739645805542e+01, 7.62796053615234516538e+01, \
        1.68089224934630576269e+02, 1.59756391350164413639e+02, 7.05360906840444183113e+01, \
        1.40264691163389668864e+01, 9.99999999999999995305e-01
    #define GS_BK_AIRY_AD \
        5.67594532638770212846e-01, 1.47562562584847203173e+01, 8.45138970141474626562e+01, \
        1.77318088145400459522e+02, 1.64234692871529701831e+02, 7.14778400825575695274e+01, \
        1.40959135607834029598e+01, 1.00000000000000000470e+00
    #define GS_BK_AIRY_AFN \
        -1.31696323418331795333e-01, -6.26456544431912369773e-01, \
        -6.93158036036933542233e-01, -2.79779981545119124951e-01, \
        -4.91900132609500318020e-02, -4.06265923594885404393e-03, \
        -1.59276496239262096340e-04, -2.77649108155232920844e-06, \
        -1.67787698489114633780e-08
    #define GS_BK_AIRY_AFD \
        1.33560420706553243746e+01, 3.26825032795224613948e+01, 2.67367040941499554804e+01, \
        9.18707402907259625840e+00, 1.47529146771666414581e+00, 1.15687173795188044134e-01, \
        4.40291641615211203805e-03, 7.54720348287414296618e-05, 4.51850092970580378464e-07
    #define GS_BK_AIRY_AGN \
        1.97339932091685679179e-02, 3.91103029615688277255e-01, 1.06579897599595591108e+00, \
        9.39169229816650230044e-01, 3.51465656105547619242e-01, 6.33888919628925490927e-02, \
        5.85804113048388458567e-03, 2.82851600836737019778e-04, 6.98793669997260967291e-06, \
        8.11789239554389293311e-08, 3.41551784765923618484e-10
    #define GS_BK_AIRY_AGD \
        9.30892908077441974853e+00, 1.98352928718312140417e+01, 1.55646628932864612953e+01, \
        5.47686069422975497931e+00, 9.54293611618961883998e-01, 8.64580826352392193095e-02, \
        4.12656523824222607191e-03, 1.01259085116509135510e-04, 1.17166733214413521882e-06, \
        4.91834570062930015649e-09
    #define GS_BK_J0_PP \
        7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e+00, \
        5.44725003058768775090e+00, 8.74716500199817011941e+00, 5.30324038235394892183e+00, \
        9.99999999999999997821e-01
    #define GS_BK_J0_PQ \
        9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e+00, \
        5.47097740330417105182e+00, 8.76190883237069594232e+00, 5.30605288235394617618e+00, \
        1.00000000000000000218e+00
    #define GS_BK_J0_QP \
        -1.13663838898469149931e-02, -1.28252718670509318512e+00, \
        -1.95539544257735972385e+01, -9.32060152123768231369e+01, \
        -1.77681167980488050595e+02, -1.47077505154951170175e+02, \
        -5.14105326766599330220e+01, -6.05014350600728481186e+00
    #define GS_BK_J0_QQ \
        6.43178256118178023184e+01, 8.56430025976980587198e+02, 3.88240183605401609683e+03, \
        7.24046774195652478189e+03, 5.93072701187316984827e+03, 2.06209331660327847417e+03, \
        2.42005740240291393179e+02
    #define GS_BK_J0_RP \
        -4.79443220978201773821e+09, 1.95617491946556577543e+12, \
        -2.49248344360967716204e+14, 9.70862251047306323952e+15
    #define GS_BK_J0_RQ \
        4.99563147152651017219e+02, 1.73785401676374683123e+05, 4.84409658339962045305e+07, \
        1.11855537045356834862e+10, 2.11277520115489217587e+12, 3.10518229857422583814e+14, \
        3.18121955943204943306e+16, 1.71086294081043136091e+18
    #define GS_BK_J1_PP \
        7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e+00, \
        5.11207951146807644818e+00, 8.42404590141772420927e+00, 5.21451598682361504063e+00, \
        1.00000000000000000254e+00
    #define GS_BK_J1_PQ \
        5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e+00, \
        5.07386386128601488557e+00, 8.39985554327604159757e+00, 5.20982848682361821619e+00, \
        9.99999999999999997461e-01
    #define GS_BK_J1_QP \
        5.10862594750176621635e-02, 4.98213872951233449420e+00, 7.58238284132545283818e+01, \
        3.66779609360150777800e+02, 7.10856304998926107277e+02, 5.97489612400613639965e+02, \
        2.11688757100572135698e+02, 2.52070205858023719784e+01
    #define GS_BK_J1_QQ \
        7.42373277035675149943e+01, 1.05644886038262816351e+03, 4.98641058337653607651e+03, \
        9.56231892404756170795e+03, 7.99704160447350683650e+03, 2.82619278517639096600e+03, \
        3.36093607810698293419e+02
    #define GS_BK_J1_RP \
        -8.99971225705559398224e+08, 4.52228297998194034323e+11, \
        -7.27494245221818276015e+13, 3.68295732863852883286e+15
    #define GS_BK_J1_RQ \
        6.20836478118054335476e+02, 2.56987256757748830383e+05, 8.35146791431949253037e+07, \
        2.21511595479792499675e+10, 4.74914122079991414898e+12, 7.84369607876235854894e+14, \
        8.95222336184627338078e+16, 5.32278620332680085395e+18
    #define GS_BK_Y0_PP GS_BK_J0_PP  /* Cephes' y0/y1 share j0/j1's asymptotic tables */
    #define GS_BK_Y0_PQ GS_BK_J0_PQ  /* Cephes' y0/y1 share j0/j1's asymptotic tables */
    #define GS_BK_Y0_QP GS_BK_J0_QP  /* Cephes' y0/y1 share j0/j1's asymptotic tables */
    #define GS_BK_Y0_QQ GS_BK_J0_QQ  /* Cephes' y0/y1 share j0/j1's asymptotic tables */
    #define GS_BK_Y0_YP \
        1.55924367855235737965e+04, -1.46639295903971606143e+07, 5.43526477051876500413e+09, \
        -9.82136065717911466409e+11, 8.75906394395366999549e+13, \
        -3.46628303384729719441e+15, 4.42733268572569800351e+16, \
        -1.84950800436986690637e+16
    #define GS_BK_Y0_YQ \
        1.04128353664259848412e+03, 6.26107330137134956842e+05, 2.68919633393814121987e+08, \
        8.64002487103935000337e+10, 2.02979612750105546709e+13, 3.17157752842975028269e+15, \
        2.50596256172653059228e+17
    #define GS_BK_Y1_PP GS_BK_J1_PP  /* Cephes' y0/y1 share j0/j1's asymptotic tables */
    #define GS_BK_Y1_PQ GS_BK_J1_PQ  /* Cephes' y0/y1 share j0/j1's asymptotic tables */
    #define GS_BK_Y1_QP GS_BK_J1_QP  /* Cephes' y0/y1 share j0/j1's asymptotic tables */
    #define GS_BK_Y1_QQ GS_BK_J1_QQ  /* Cephes' y0/y1 share j0/j1's asymptotic tables */
    #define GS_BK_Y1_YP \
        1.26320474790178026440e+09, -6.47355876379160291031e+11, 1.14509511541823727583e+14, \
        -8.12770255501325109621e+15, 2.02439475713594898196e+17, \
        -7.78877196265950026825e+17
    #define GS_BK_Y1_YQ \
        5.94301592346128195359e+02, 2.35564092943068577943e+05, 7.34811944459721705660e+07, \
        1.87601316108706159478e+10, 3.88231277496238566008e+12, 6.20557727146953693363e+14, \
        6.87141087355300489866e+16, 3.97270608116560655612e+18
    #define GS_BK_K0_A \
        1.37446543561352307156e-16, 4.25981614279661018399e-14, 1.03496952576338420167e-11, \
        1.90451637722020886025e-09, 2.53479107902614945675e-07, 2.28621210311945178607e-05, \
        1.26461541144692592338e-03, 3.59799365153615016266e-02, 3.44289899924628486886e-01, \
        -5.35327393233902768720e-01
    #define GS_BK_K0_B \
        5.30043377268626276149e-18, -1.64758043015242134646e-17, 5.21039150503902756861e-17, \
        -1.67823109680541210385e-16, 5.51205597852431940784e-16, \
        -1.84859337734377901440e-15, 6.34007647740507060557e-15, \
        -2.22751332699166985548e-14, 8.03289077536357521100e-14, \
        -2.98009692317273043925e-13, 1.14034058820847496303e-12, \
        -4.51459788337394416547e-12, 1.85594911495471785253e-11, \
        -7.95748924447710747776e-11, 3.57739728140030116597e-10, \
        -1.69753450938905987466e-09, 8.57403401741422608519e-09, \
        -4.66048989768794782956e-08, 2.76681363944501510342e-07, \
        -1.83175552271911948767e-06, 1.39498137188764993662e-05, \
        -1.28495495816278026384e-04, 1.56988388573005337491e-03, \
        -3.14481013119645005427e-02, 2.44030308206595545468e+00
    #define GS_BK_K1_A \
        -7.02386347938628759343e-18, -2.42744985051936593393e-15, \
        -6.66690169419932900609e-13, -1.41148839263352776110e-10, \
        -2.21338763073472585583e-08, -2.43340614156596823496e-06, \
        -1.73028895751305206302e-04, -6.97572385963986435018e-03, \
        -1.22611180822657148235e-01, -3.53155960776544875667e-01, \
        1.52530022733894777053e+00
    #define GS_BK_K1_B \
        -5.75674448366501715755e-18, 1.79405087314755922667e-17, \
        -5.68946255844285935196e-17, 1.83809354436663880070e-16, \
        -6.05704724837331885336e-16, 2.03870316562433424052e-15, \
        -7.01983709041831346144e-15, 2.47715442448130437068e-14, \
        -8.97670518232499435011e-14, 3.34841966607842919884e-13, \
        -1.28917396095102890680e-12, 5.13963967348173025100e-12, \
        -2.12996783842756842877e-11, 9.21831518760500529508e-11, \
        -4.19035475934189648750e-10, 2.01504975519703286596e-09, \
        -1.03457624656780970260e-08, 5.74108412545004946722e-08, \
        -3.50196060308781257119e-07, 2.40648494783721712015e-06, \
        -1.93619797416608296024e-05, 1.95215518471351631108e-04, \
        -2.85781685962277938680e-03, 1.03923736576817238437e-01, 2.72062619048444266945e+00
    #define GS_BK_I0E_A \
        -4.41534164647933937950E-18, 3.33079451882223809783E-17, \
        -2.43127984654795469359E-16, 1.71539128555513303061E-15, \
        -1.16853328779934516808E-14, 7.67618549860493561688E-14, \
        -4.85644678311192946090E-13, 2.95505266312963983461E-12, \
        -1.72682629144155570723E-11, 9.67580903537323691224E-11, \
        -5.18979560163526290666E-10, 2.65982372468238665035E-9, -1.30002500998624804212E-8, \
        6.04699502254191894932E-8, -2.67079385394061173391E-7, 1.11738753912010371815E-6, \
        -4.41673835845875056359E-6, 1.64484480707288970893E-5, -5.75419501008210370398E-5, \
        1.88502885095841655729E-4, -5.76375574538582365885E-4, 1.63947561694133579842E-3, \
        -4.32430999505057594430E-3, 1.05464603945949983183E-2, -2.37374148058994688156E-2, \
        4.93052842396707084878E-2, -9.49010970480476444210E-2, 1.71620901522208775349E-1, \
        -3.04682672343198398683E-1, 6.76795274409476084995E-1
    #define GS_BK_I0E_B \
        -7.23318048787475395456E-18, -4.83050448594418207126E-18, \
        4.46562142029675999901E-17, 3.46122286769746109310E-17, -2.82762398051658348494E-16, \
        -3.42548561967721913462E-16, 1.77256013305652638360E-15, 3.81168066935262242075E-15, \
        -9.55484669882830764870E-15, -4.15056934728722208663E-14, \
        1.54008621752140982691E-14, 3.85277838274214270114E-13, 7.18012445138366623367E-13, \
        -1.79417853150680611778E-12, -1.32158118404477131188E-11, \
        -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10, \
        3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7, \
        2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3, \
        8.04490411014108831608E-1
    #define GS_BK_I1E_A \
        2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16, \
        -1.10559694773538630805E-15, 7.60068429473540693410E-15, \
        -5.04218550472791168711E-14, 3.22379336594557470981E-13, \
        -1.98397439776494371520E-12, 1.17361862988909016308E-11, \
        -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9, \
        9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7, \
        -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5, \
        4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4, \
        -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2, \
        2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1, \
        -1.76416518357834055153E-1, 2.52587186443633654823E-1
    #define GS_BK_I1E_B \
        7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17, \
        -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16, \
        -1.88035477551078244854E-15, -3.81440307243700780478E-15, \
        1.04202769841288027642E-14, 4.27244001671195135429E-14, -2.10154184277266431302E-14, \
        -4.08355111109219731823E-13, -7.19855177624590851209E-13, \
        2.03562854414708950722E-12, 1.41258074366137813316E-11, 3.25260358301548823856E-11, \
        -1.89749581235054123450E-11, -5.58974346219658380687E-10, \
        -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7, \
        -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3, \
        7.78576235018280120474E-1

    #define GS_BK_PIO4 0.785398163397448309615660845819875721
    #define GS_BK_3PIO4 2.356194490192344928846982537459627163
    #define GS_BK_SQ2OPI 0.797884560802865355879892119868763737

    /* ---- the functions, written once for a type T and made for float (S = f) and double
       (S = d) at the end; literals keep torch's types (T(5.0) is (T)5.0, 0.5 a double) */

    #define GS_BK_DEFINE_BESSEL(T, S, F) \
    GS_BK_FN(F) T gs_bk_airy_ai_##S(T x) { \
        static const T AN[] = {GS_BK_AIRY_AN}, AD[] = {GS_BK_AIRY_AD}; \
        static const T AFN[] = {GS_BK_AIRY_AFN}, AFD[] = {GS_BK_AIRY_AFD}; \
        static const T AGN[] = {GS_BK_AIRY_AGN}, AGD[] = {GS_BK_AIRY_AGD}; \
        int domain_flag = 0; \
        T ai = (T)0.0, f, g, k, m, n, t, z; \
        if (isinf(x)) return (T)NAN; \
        if (x > (T)103.892) return (T)0.0; \
        if (x < (T)-2.09) { \
            T afn, afd, agn, agd; \
            z = (T)1.0 / ((T)-2.0 * x * gs_bk_sqrt(-x) / (T)3.0); \
            GS_BK_HORNER(T, afn, z * z, AFN); \
            GS_BK_HORNER(T, afd, z * z, AFD); \
            GS_BK_HORNER(T, agn, z * z, AGN); \
            GS_BK_HORNER(T, agd, z * z, AGD); \
            t = (T)-2.0 * x * gs_bk_sqrt(-x) / (T)3.0 + (T)0.25 * (T)3.14159265358979323846; \
            return (T)5.64189583547756286948e-01 / gs_bk_sqrt(gs_bk_sqrt(-x)) \
                * (gs_bk_sin(t) * ((T)1.0 + z * z * afn / afd) - gs_bk_cos(t) * (z * agn / agd)); \
        } \
        if (x >= (T)2.09) { \
            T an, ad, zeta; \
            domain_flag = 5; \
            zeta = (T)2.0 * x * gs_bk_sqrt(x) / (T)3.0; \
            GS_BK_HORNER(T, an, (T)1.0 / zeta, AN); \
            GS_BK_HORNER(T, ad, (T)1.0 / zeta, AD); \
            ai = (T)5.64189583547756286948e-01 * (an / ad) \
                / ((T)2.0 * gs_bk_sqrt(gs_bk_sqrt(x)) * gs_bk_exp(zeta)); \
            if (x > (T)8.3203353) return ai; \
        } \
        f = 1.0; g = x; k = 1.0; m = 1.0; n = x; t = 1.0; z = x * x * x; \
        while (t > GS_BK_EPS(T)) { \
            m *= z; k += (T)1.0; m /= k; n *= z; k += (T)1.0; n /= k; m /= k; f += m; \
            k += (T)1.0; n /= k; g += n; t = gs_bk_fabs(m / f); \
        } \
        if ((domain_flag & 1) == 0) \
            return (T)0.355028053887817239260 * f - (T)0.258819403792806798405 * g; \
        return ai; \
    } \
    GS_BK_FN(F) T gs_bk_bessel_j0_##S(T x) { \
        static const T PP[] = {GS_BK_J0_PP}, PQ[] = {GS_BK_J0_PQ}, QP[] = {GS_BK_J0_QP}; \
        static const T QQ[] = {GS_BK_J0_QQ}, RP[] = {GS_BK_J0_RP}, RQ[] = {GS_BK_J0_RQ}; \
        T pp, pq, qp, qq, rp, rq, z; \
        if (x < (T)0) x = -x; \
        if (x <= (T)5.0) { \
            if (x < (T)0.00001) return (T)1.0 - x * x / (T)4.0; \
            GS_BK_HORNER(T, rp, x * x, RP); \
            GS_BK_HORNER(T, rq, x * x, RQ); \
            return (x * x - (T)5.78318596294678452118e+00) \
                * (x * x - (T)3.04712623436620863991e+01) * rp / rq; \
        } \
        z = (T)25.0 / (x * x); \
        GS_BK_HORNER(T, pp, z, PP); GS_BK_HORNER(T, pq, z, PQ); \
        GS_BK_HORNER(T, qp, z, QP); GS_BK_HORNER(T, qq, z, QQ); \
        return (pp / pq * gs_bk_cos(x - (T)GS_BK_PIO4) \
                - (T)5.0 / x * (qp / qq) * gs_bk_sin(x - (T)GS_BK_PIO4)) \
            * (T)GS_BK_SQ2OPI / gs_bk_sqrt(x); \
    } \
    GS_BK_FN(F) T gs_bk_bessel_j1_##S(T x) { \
        static const T PP[] = {GS_BK_J1_PP}, PQ[] = {GS_BK_J1_PQ}, QP[] = {GS_BK_J1_QP}; \
        static const T QQ[] = {GS_BK_J1_QQ}, RP[] = {GS_BK_J1_RP}, RQ[] = {GS_BK_J1_RQ}; \
        T pp, pq, qp, qq, rp, rq, z; \
        if (x < (T)0.0) return -gs_bk_bessel_j1_##S(-x); \
        if (x <= (T)5.0) { \
            GS_BK_HORNER(T, rp, x * x, RP); \
            GS_BK_HORNER(T, rq, x * x, RQ); \
            return rp / rq * x * (x * x - (T)1.46819706421238932572e+01) \
                * (x * x - (T)4.92184563216946036703e+01); \
        } \
        z = (T)5.0 / x * ((T)5.0 / x); \
        GS_BK_HORNER(T, pp, z, PP); GS_BK_HORNER(T, pq, z, PQ); \
        GS_BK_HORNER(T, qp, z, QP); GS_BK_HORNER(T, qq, z, QQ); \
        return (pp / pq * gs_bk_cos(x - (T)GS_BK_3PIO4) \
                - (T)5.0 / x * (qp / qq) * gs_bk_sin(x - (T)GS_BK_3PIO4)) \
            * (T)GS_BK_SQ2OPI / gs_bk_sqrt(x); \
    } \
    GS_BK_FN(F) T gs_bk_bessel_y0_##S(T x) { \
        static const T PP[] = {GS_BK_Y0_PP}, PQ[] = {GS_BK_Y0_PQ}, QP[] = {GS_BK_Y0_QP}; \
        static const T QQ[] = {GS_BK_Y0_QQ}, YP[] = {GS_BK_Y0_YP}, YQ[] = {GS_BK_Y0_YQ}; \
        T pp, pq, qp, qq, yp, yq, z; \
        if (x <= (T)5.0) { \
            if (x == (T)0.0) return -(T)INFINITY; \
            if (x < (T)0.0) return (T)NAN; \
            GS_BK_HORNER(T, yp, x * x, YP); \
            GS_BK_HORNER(T, yq, x * x, YQ); \
            return yp / yq + ((T)0.636619772367581343075535053490057448 * gs_bk_log(x) \
                              * gs_bk_bessel_j0_##S(x)); \
        } \
        z = (T)25.0 / (x * x); \
        GS_BK_HORNER(T, pp, z, PP); GS_BK_HORNER(T, pq, z, PQ); \
        GS_BK_HORNER(T, qp, z, QP); GS_BK_HORNER(T, qq, z, QQ); \
        return (pp / pq * gs_bk_sin(x - (T)GS_BK_PIO4) \
                + (T)5.0 / x * (qp / qq) * gs_bk_cos(x - (T)GS_BK_PIO4)) \
            * (T)GS_BK_SQ2OPI / gs_bk_sqrt(x); \
    } \
    GS_BK_FN(F) T gs_bk_bessel_y1_##S(T x) { \
        static const T PP[] = {GS_BK_Y1_PP}, PQ[] = {GS_BK_Y1_PQ}, QP[] = {GS_BK_Y1_QP}; \
        static const T QQ[] = {GS_BK_Y1_QQ}, YP[] = {GS_BK_Y1_YP}, YQ[] = {GS_BK_Y1_YQ}; \
        T pp, pq, qp, qq, yp, yq, z; \
        if (x <= (T)5.0) { \
            if (x == (T)0.0) return -(T)INFINITY; \
            if (x <= (T)0.0) return (T)NAN; \
            GS_BK_HORNER(T, yp, x * x, YP); \
            GS_BK_HORNER(T, yq, x * x, YQ); \
            return x * (yp / yq) + ((T)0.636619772367581343075535053490057448 \
                                    * (gs_bk_bessel_j1_##S(x) * gs_bk_log(x) - (T)1.0 / x)); \
        } \
        z = (T)5.0 / x * ((T)5.0 / x); \
        GS_BK_HORNER(T, pp, z, PP); GS_BK_HORNER(T, pq, z, PQ); \
        GS_BK_HORNER(T, qp, z, QP); GS_BK_HORNER(T, qq, z, QQ); \
        return (pp / pq * gs_bk_sin(x - (T)GS_BK_3PIO4) \
                + (T)5.0 / x * (qp / qq) * gs_bk_cos(x - (T)GS_BK_3PIO4)) \
            * (T)GS_BK_SQ2OPI / gs_bk_sqrt(x); \
    } \
    GS_BK_FN(F) T gs_bk_spherical_bessel_j0_##S(T x) { \
        if (isinf(x)) return (T)0.0; \
        if (gs_bk_fabs(x) < (T)0.5) \
            return (T)1.0 + x * x * ((T)-1.0 / (T)6.0 + x * x * ((T)1.0 / (T)120.0 + x * x \
                * ((T)-1.0 / (T)5040.0 + x * x * ((T)1.0 / (T)362880.0 + x * x \
                * ((T)-1.0 / (T)39916800.0 + x * x * ((T)1.0 / (T)6227020800.0)))))); \
        return gs_bk_sin(x) / x; \
    }

    /* the modified Bessel functions (Cephes' i0, i1, k0, k1 and their scaled forms) */
    #define GS_BK_DEFINE_MODIFIED(T, S, F) \
    GS_BK_FN(F) T gs_bk_modified_bessel_i0_##S(T x) { \
        static const T A[] = {GS_BK_I0E_A}, B[] = {GS_BK_I0E_B}; \
        T a, p, ax = gs_bk_fabs(x); \
        if (ax <= (T)8.0) { \
            GS_BK_CLENSHAW(T, a, p, (ax / (T)2.0) - (T)2.0, A, GS_BK_LEN(A)); \
            return gs_bk_exp(ax) * ((T)0.5 * (a - p)); \
        } \
        GS_BK_CLENSHAW(T, a, p, (T)32.0 / ax - (T)2.0, B, GS_BK_LEN(B)); \
        return gs_bk_exp(ax) * ((T)0.5 * (a - p)) / gs_bk_sqrt(ax); \
    } \
    GS_BK_FN(F) T gs_bk_modified_bessel_i1_##S(T x) { \
        static const T A[] = {GS_BK_I1E_A}, B[] = {GS_BK_I1E_B}; \
        T a, p, ax = gs_bk_fabs(x); \
        if (ax <= (T)8.0) { \
            GS_BK_CLENSHAW(T, a, p, (ax / (T)2.0) - (T)2.0, A, GS_BK_LEN(A)); \
            if (x < (T)0.0) return -((T)0.5 * (a - p) * ax * gs_bk_exp(ax)); \
            return (T)0.5 * (a - p) * ax * gs_bk_exp(ax); \
        } \
        GS_BK_CLENSHAW(T, a, p, (T)32.0 / ax - (T)2.0, B, GS_BK_LEN(B)); \
        if (x < (T)0.0) return -(gs_bk_exp(ax) * ((T)0.5 * (a - p)) / gs_bk_sqrt(ax)); \
        return gs_bk_exp(ax) * ((T)0.5 * (a - p)) / gs_bk_sqrt(ax); \
    } \
    GS_BK_FN(F) T gs_bk_modified_bessel_k0_##S(T x) { \
        static const T A[] = {GS_BK_K0_A}, B[] = {GS_BK_K0_B}; \
        T a, p; \
        if (x == (T)0.0) return (T)INFINITY; \
        if (x < (T)0.0) return (T)NAN; \
        if (x <= (T)2.0) { \
            GS_BK_CLENSHAW(T, a, p, x * x - (T)2.0, A, GS_BK_LEN(A)); \
            /* (torch's log(0.5 * x) is of a double) */ \
            if (F && !GS_BK_IS_FLOAT(T)) \
                return GS_BK_FMA(-gs_bk_log(0.5 * x), gs_bk_modified_bessel_i0_##S(x), \
                                 (T)0.5 * (a - p)); \
            return (T)0.5 * (a - p) - gs_bk_log(0.5 * x) * gs_bk_modified_bessel_i0_##S(x); \
        } \
        GS_BK_CLENSHAW(T, a, p, (T)8.0 / x - (T)2.0, B, GS_BK_LEN(B)); \
        return gs_bk_exp(-x) * ((T)0.5 * (a - p)) / gs_bk_sqrt(x); \
    } \
    GS_BK_FN(F) T gs_bk_modified_bessel_k1_##S(T x) { \
        static const T A[] = {GS_BK_K1_A}, B[] = {GS_BK_K1_B}; \
        T a, p; \
        if (x == (T)0.0) return (T)INFINITY; \
        if (x < (T)0.0) return (T)NAN; \
        if (x <= (T)2.0) { \
            GS_BK_CLENSHAW(T, a, p, x * x - (T)2.0, A, GS_BK_LEN(A)); \
            return gs_bk_log((T)0.5 * x) * gs_bk_modified_bessel_i1_##S(x) + (T)0.5 * (a - p) / x; \
        } \
        GS_BK_CLENSHAW(T, a, p, (T)8.0 / x - (T)2.0, B, GS_BK_LEN(B)); \
        return gs_bk_exp(-x) * ((T)0.5 * (a - p)) / gs_bk_sqrt(x); \
    } \
    GS_BK_FN(F) T gs_bk_scaled_modified_bessel_k0_##S(T x) { \
        static const T A[] = {GS_BK_K0_A}, B[] = {GS_BK_K0_B}; \
        T a, p; \
        if (x == (T)0.0) return (T)INFINITY; \
        if (x < (T)0.0) return (T)NAN; \
        if (x <= (T)2.0) { \
            GS_BK_CLENSHAW(T, a, p, x * x - (T)2.0, A, GS_BK_LEN(A)); \
            if (F) \
                return GS_BK_FMA(-gs_bk_log((T)0.5 * x), gs_bk_modified_bessel_i0_##S(x), \
                                 (T)0.5 * (a - p)) * gs_bk_exp(x); \
            return ((T)0.5 * (a - p) - gs_bk_log((T)0.5 * x) * gs_bk_modified_bessel_i0_##S(x)) \
                * gs_bk_exp(x); \
        } \
        GS_BK_CLENSHAW(T, a, p, (T)8.0 / x - (T)2.0, B, GS_BK_LEN(B)); \
        return (T)0.5 * (a - p) / gs_bk_sqrt(x); \
    } \
    GS_BK_FN(F) T gs_bk_scaled_modified_bessel_k1_##S(T x) { \
        static const T A[] = {GS_BK_K1_A}, B[] = {GS_BK_K1_B}; \
        T a, p; \
        if (x == (T)0.0) return (T)INFINITY; \
        if (x < (T)0.0) return (T)NAN; \
        if (x <= (T)2.0) { \
            GS_BK_CLENSHAW(T, a, p, x * x - (T)2.0, A, GS_BK_LEN(A)); \
            return (gs_bk_log((T)0.5 * x) * gs_bk_modified_bessel_i1_##S(x) \
                    + (T)0.5 * (a - p) / x) * gs_bk_exp(x); \
        } \
        GS_BK_CLENSHAW(T, a, p, (T)8.0 / x - (T)2.0, B, GS_BK_LEN(B)); \
        return (T)0.5 * (a - p) / gs_bk_sqrt(x); \
    } \
    /* torch's calc_i0e, calc_i1, calc_i1e (float i1/i1e: the last 17 and 7 terms); its \
       calc_i0 is modified_bessel_i0's arithmetic, step for step (the table takes that) */ \
    GS_BK_FN(F) T gs_bk_i0e_##S(T x_) { \
        static const T A[] = {GS_BK_I0E_A}, B[] = {GS_BK_I0E_B}; \
        T a, p, x = gs_bk_fabs(x_); \
        if (x <= (T)8.0) { \
            GS_BK_CLENSHAW(T, a, p, (x / (T)2.0) - (T)2.0, A, GS_BK_LEN(A)); \
            return (T)0.5 * (a - p); \
        } \
        GS_BK_CLENSHAW(T, a, p, (T)32.0 / x - (T)2.0, B, GS_BK_LEN(B)); \
        return (T)0.5 * (a - p) / gs_bk_sqrt(x); \
    } \
    GS_BK_FN(F) T gs_bk_i1_##S(T x_) { \
        static const T A[] = {GS_BK_I1E_A}, B[] = {GS_BK_I1E_B}; \
        size_t skip_a = GS_BK_IS_FLOAT(T) ? 12 : 0, skip_b = GS_BK_IS_FLOAT(T) ? 18 : 0; \
        T a, p, out, x = gs_bk_fabs(x_); \
        if (x <= (T)8.0) { \
            GS_BK_CLENSHAW(T, a, p, (x / (T)2.0) - (T)2.0, A + skip_a, GS_BK_LEN(A) - skip_a); \
            out = gs_bk_exp(x) * x * ((T)0.5 * (a - p)); \
            return (x_ < (T)0.0) ? -out : out; \
        } \
        GS_BK_CLENSHAW(T, a, p, (T)32.0 / x - (T)2.0, B + skip_b, GS_BK_LEN(B) - skip_b); \
        out = (gs_bk_exp(x) * ((T)0.5 * (a - p))) / gs_bk_sqrt(x); \
        return (x_ < (T)0.0) ? -out : out; \
    } \
    GS_BK_FN(F) T gs_bk_i1e_##S(T x_) { \
        static const T A[] = {GS_BK_I1E_A}, B[] = {GS_BK_I1E_B}; \
        size_t skip_a = GS_BK_IS_FLOAT(T) ? 12 : 0, skip_b = GS_BK_IS_FLOAT(T) ? 18 : 0; \
        T a, p, out, x = gs_bk_fabs(x_); \
        if (x <= (T)8.0) { \
            GS_BK_CLENSHAW(T, a, p, (x / (T)2.0) - (T)2.0, A + skip_a, GS_BK_LEN(A) - skip_a); \
            out = ((T)0.5 * (a - p)) * x; \
            return (x_ < (T)0.0) ? -out : out; \
        } \
        GS_BK_CLENSHAW(T, a, p, (T)32.0 / x - (T)2.0, B + skip_b, GS_BK_LEN(B) - skip_b); \
        out = ((T)0.5 * (a - p)) / gs_bk_sqrt(x); \
        return (x_ < (T)0.0) ? -out : out; \
    }

    #define GS_BK_DEFINE_BESSELS(T, S, P, F) \
        GS_BK_DEFINE_BESSEL(T, S, F) GS_BK_DEFINE_MODIFIED(T, S, F) \
        static T (*const gs_bk_bessels_##S[])(T) = { \
            gs_bk_airy_ai_##S, gs_bk_bessel_j0_##S, gs_bk_bessel_j1_##S, gs_bk_bessel_y0_##S, \
            gs_bk_bessel_y1_##S, gs_bk_modified_bessel_i0_##S, gs_bk_modified_bessel_i1_##S, \
            gs_bk_modified_bessel_k0_##S, gs_bk_modified_bessel_k1_##S, \
            gs_bk_scaled_modified_bessel_k0_##S, gs_bk_scaled_modified_bessel_k1_##S, \
            gs_bk_spherical_bessel_j0_##S, gs_bk_modified_bessel_i0_##S /* i0 */, \
            gs_bk_i0e_##S, gs_bk_i1_##S, gs_bk_i1e_##S};
    GS_BK_COPIES(GS_BK_DEFINE_BESSELS)
    GS_BK_UNARY_RANGE(gs_bk_bessel_range, gs_bk_bessels, fd)
    #define GS_BK_N_BESSEL ((int)GS_BK_LEN(gs_bk_bessels_f))
    """
    int GS_BK_N_BESSEL
    void gs_bk_bessel_range(int code, int single, int fma, const char* x, char* out,
                            Py_ssize_t start, Py_ssize_t stop) noexcept nogil


# the functions: the Bessel functions in the order of the C table, then erfcx
# (_erfcx_igamma_kernels.pyx); the polynomials (_polynomial_kernels.pyx), then igamma and
# igammac
BESSEL = (
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
    "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0", "i0",
    "i0e", "i1", "i1e",
)
if len(BESSEL) != GS_BK_N_BESSEL:  # pragma: no cover
    raise ImportError("_bessel_kernels: the function names do not match the C table")
UNARY = BESSEL + ERFCX
BINARY = POLYNOMIALS + IGAMMA
cdef dict _UNARY_CODES = {name: i for i, name in enumerate(UNARY)}
cdef dict _BINARY_CODES = {name: i for i, name in enumerate(BINARY)}

cdef Py_ssize_t _threshold = 1 << 11   # Note [Bessel kernels' threads]


cdef int _code(dict codes, str kind, str name) except -1:
    code = codes.get(name)
    if code is None:
        raise ValueError(f"_bessel_kernels.{kind}: no function {name!r}; the functions are "
                         f"{', '.join(UNARY if kind == 'unary' else BINARY)}")
    return code


def unary(str name, x):
    """``name(x)`` of a float32/float64 C-contiguous array ``x``, as a new array, with
    torch's algorithm in the array's dtype (Note [Bessel kernels follow torch's
    arithmetic]); ``name`` is one of :data:`UNARY`.

    Examples
    --------
    >>> import numpy as np
    >>> unary("i0", np.array([0.0, 1.0])).round(6)
    array([1.      , 1.266066])
    >>> unary("i0", np.array([0.0], np.float32))  # (torch's float32 Chebyshev sum)
    array([0.99999994], dtype=float32)
    """
    cdef int code = _code(_UNARY_CODES, "unary", name)
    cdef unary_range_t run = gs_bk_bessel_range
    if code >= len(BESSEL):
        run, code = erfcx_range, code - len(BESSEL)
    cdef int typenum = _check_input(name, "x", x)
    cdef cnp.ndarray xa = <cnp.ndarray>x
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(xa), cnp.PyArray_DIMS(xa),
                                             typenum, 0)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(xa), block, start, step
    cdef int nthreads = kernel_threads(n, _threshold)
    cdef int single = typenum == cnp.NPY_FLOAT
    cdef int fma = kernel_avx2()
    cdef const char* xp = <const char*>cnp.PyArray_DATA(xa)
    cdef char* op_ = <char*>cnp.PyArray_DATA(out)
    if nthreads <= 1:
        with nogil:
            run(code, single, fma, xp, op_, 0, n)
        return out
    step = kernel_block_size(n, nthreads)
    with nogil:
        for block in prange(nthreads, schedule="static", num_threads=nthreads):
            start = block * step
            run(code, single, fma, xp, op_, min(start, n), min(start + step, n))
    return out


def binary(str name, x, y):
    """``name(x, y)`` of two float32/float64 C-contiguous arrays of one dtype, as a new
    array of the shape of the larger: the two have one shape, or one of them has one
    element (repeated); ``name`` is one of :data:`BINARY` (a polynomial of ``x`` and
    degree ``y``, truncated to an integer as torch does, or ``igamma(x, y)``).

    Examples
    --------
    >>> import numpy as np
    >>> binary("hermite_polynomial_h", np.array([1.0, 2.0]), np.array([3.0]))
    array([-4., 40.])
    >>> binary("igamma", np.array([1.0]), np.array([1.0])).round(6)
    array([0.632121])
    """
    cdef int code = _code(_BINARY_CODES, "binary", name)
    cdef binary_range_t run = polynomial_range
    if code >= len(POLYNOMIALS):
        run, code = igamma_range, code - len(POLYNOMIALS)
    cdef int typenum = _check_input(name, "x", x)
    if _check_input(name, "y", y) != typenum:
        raise TypeError(f"{name}: x and y must have one dtype, got {x.dtype} and {y.dtype}; "
                        "cast one of them")
    cdef cnp.ndarray xa = <cnp.ndarray>x, ya = <cnp.ndarray>y, big
    cdef Py_ssize_t nx = cnp.PyArray_SIZE(xa), ny = cnp.PyArray_SIZE(ya)
    cdef Py_ssize_t sx = 1, sy = 1
    if cnp.PyArray_SAMESHAPE(xa, ya):
        big = xa
    elif ny == 1:
        big, sy = xa, 0
    elif nx == 1:
        big, sx = ya, 0
    else:
        raise ValueError(f"{name}: x and y must have one shape, or one of them one element; "
                         f"got {x.shape} and {y.shape} (broadcast them first)")
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(big), cnp.PyArray_DIMS(big),
                                             typenum, 0)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(big), block, start, step
    cdef int nthreads = kernel_threads(n, _threshold)
    cdef int single = typenum == cnp.NPY_FLOAT
    cdef int fma = kernel_avx2()
    cdef const char* xp = <const char*>cnp.PyArray_DATA(xa)
    cdef const char* yp = <const char*>cnp.PyArray_DATA(ya)
    cdef char* op_ = <char*>cnp.PyArray_DATA(out)
    if nthreads <= 1:
        with nogil:
            run(code, single, fma, xp, sx, yp, sy, op_, 0, n)
        return out
    step = kernel_block_size(n, nthreads)
    with nogil:
        for block in prange(nthreads, schedule="static", num_threads=nthreads):
            start = block * step
            run(code, single, fma, xp, sx, yp, sy, op_, min(start, n), min(start + step, n))
    return out
